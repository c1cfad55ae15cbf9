"""Train a multi-task model whose auxiliary loss weight ramps up over the first steps.

The train step is built by a factory and keeps its own step count in the closure; the returned
loss function is compiled.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class MultiTask(nn.Module):
    def __init__(self):
        super().__init__()
        self.trunk = nn.Sequential(nn.Linear(16, 32), nn.ReLU())
        self.cls = nn.Linear(32, 4)
        self.recon = nn.Linear(32, 16)

    def forward(self, x):
        h = self.trunk(x)
        return self.cls(h), self.recon(h)


def make_loss_fn(model, warmup_steps=8):
    step = 0

    def loss_fn(x, y):
        nonlocal step
        step += 1
        aux_weight = min(1.0, step / warmup_steps)
        logits, recon = model(x)
        return F.cross_entropy(logits, y) + aux_weight * F.mse_loss(recon, x)

    return loss_fn


model = MultiTask()
loss_fn = torch.compile(make_loss_fn(model))
opt = torch.optim.Adam(model.parameters(), lr=1e-3)
for _ in range(12):
    loss = loss_fn(torch.randn(8, 16), torch.randint(0, 4, (8,)))
    opt.zero_grad()
    loss.backward()
    opt.step()
print(float(loss))
