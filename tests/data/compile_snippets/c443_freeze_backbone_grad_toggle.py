"""Linear-probe-then-fine-tune: for the first epochs the backbone runs under
`torch.set_grad_enabled(not self.freeze_backbone)`, so only the head trains; the flag is cleared
once for full fine-tuning."""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class Classifier(nn.Module):
    def __init__(self):
        super().__init__()
        self.backbone = nn.Sequential(nn.Linear(32, 64), nn.GELU(), nn.Linear(64, 64), nn.GELU())
        self.head = nn.Linear(64, 10)
        self.freeze_backbone = True

    def forward(self, x):
        with torch.set_grad_enabled(self.training and not self.freeze_backbone):
            feats = self.backbone(x)
        return self.head(feats)


model = Classifier()
cmodel = torch.compile(model)
opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
for epoch in range(6):
    model.freeze_backbone = epoch < 2
    for _ in range(3):
        x, y = torch.randn(16, 32), torch.randint(0, 10, (16,))
        loss = F.cross_entropy(cmodel(x), y)
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
print(f"epoch {epoch} loss {loss.item():.4f}")
