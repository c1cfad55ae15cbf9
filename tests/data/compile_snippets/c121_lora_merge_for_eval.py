"""LoRA fine-tuning of a small classifier, with the adapters merged into the base weights for
the validation pass after each epoch and unmerged again before training resumes.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class LoRALinear(nn.Module):
    def __init__(self, d_in, d_out, r=4, alpha=8):
        super().__init__()
        self.base = nn.Linear(d_in, d_out)
        self.base.requires_grad_(False)
        self.lora_A = nn.Parameter(torch.randn(r, d_in) * 0.01)
        self.lora_B = nn.Parameter(torch.zeros(d_out, r))
        self.scaling = alpha / r
        self.merged = False

    @torch.no_grad()
    def merge(self):
        self.base.weight += self.scaling * self.lora_B @ self.lora_A
        self.merged = True

    @torch.no_grad()
    def unmerge(self):
        self.base.weight -= self.scaling * self.lora_B @ self.lora_A
        self.merged = False

    def forward(self, x):
        y = self.base(x)
        if not self.merged:
            y = y + self.scaling * (x @ self.lora_A.t() @ self.lora_B.t())
        return y


model = nn.Sequential(LoRALinear(16, 32), nn.ReLU(), nn.Dropout(0.1), LoRALinear(32, 3))
cmodel = torch.compile(model)
opt = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=1e-2)
lora_layers = [m for m in model.modules() if isinstance(m, LoRALinear)]

for epoch in range(4):
    model.train()
    for _ in range(3):
        x, y = torch.randn(8, 16), torch.randint(0, 3, (8,))
        loss = F.cross_entropy(cmodel(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
    for layer in lora_layers:
        layer.merge()
    model.eval()
    with torch.no_grad():
        acc = (cmodel(torch.randn(32, 16)).argmax(-1) == torch.randint(0, 3, (32,))).float().mean()
    for layer in lora_layers:
        layer.unmerge()
    print(epoch, float(loss), float(acc))
