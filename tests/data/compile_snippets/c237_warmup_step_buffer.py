"""Lightning-style fine-tuning where the module counts its own optimisation steps in a buffer (saved
with the checkpoint) and scales the loss by a linear warm-up factor read from that counter in the
compiled training_step."""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class Classifier(nn.Module):
    def __init__(self, warmup_steps=50):
        super().__init__()
        self.backbone = nn.Sequential(nn.Linear(32, 64), nn.GELU(), nn.Linear(64, 10))
        self.warmup_steps = warmup_steps
        self.register_buffer("steps_done", torch.zeros((), dtype=torch.long))

    def training_step(self, x, y):
        logits = self.backbone(x)
        warmup = torch.clamp((self.steps_done + 1).float() / self.warmup_steps, max=1.0)
        self.steps_done.add_(1)
        return F.cross_entropy(logits, y, label_smoothing=0.1) * warmup


model = Classifier()
training_step = torch.compile(model.training_step)
opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
for _ in range(12):
    x, y = torch.randn(16, 32), torch.randint(0, 10, (16,))
    loss = training_step(x, y)
    loss.backward()
    opt.step()
    opt.zero_grad()
print(f"step {int(model.steps_done)} loss {loss.item():.4f}")
