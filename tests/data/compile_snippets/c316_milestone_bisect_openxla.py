"""Detection fine-tuning on an XLA device: the auxiliary-head loss weight follows a step
schedule with milestones, and the compiled loss asks the schedule object for the current
weight by passing it the global step."""
import bisect

import torch
import torch.nn as nn
import torch.nn.functional as F
import torch_xla.core.xla_model as xm

torch.manual_seed(0)
device = xm.xla_device()


class MultiStepWeight:
    def __init__(self, base, milestones, gamma=0.5):
        self.base = base
        self.milestones = milestones
        self.gamma = gamma

    def at(self, step):
        passed = bisect.bisect_right(self.milestones, step)
        return self.base * self.gamma ** passed


class Detector(nn.Module):
    def __init__(self, dim=32, n_cls=5):
        super().__init__()
        self.backbone = nn.Sequential(nn.Linear(dim, 64), nn.ReLU())
        self.cls = nn.Linear(64, n_cls)
        self.aux = nn.Linear(64, n_cls)

    def forward(self, x):
        h = self.backbone(x)
        return self.cls(h), self.aux(h)


model = Detector().to(device)
aux_weight = MultiStepWeight(0.4, milestones=[3, 6, 9])
opt = torch.optim.SGD(model.parameters(), lr=0.05)


@torch.compile(backend="openxla")
def compute_loss(x, y, step):
    logits, aux_logits = model(x)
    return F.cross_entropy(logits, y) + aux_weight.at(step) * F.cross_entropy(aux_logits, y)


for step in range(12):
    x = torch.randn(8, 32, device=device)
    y = torch.randint(0, 5, (8,), device=device)
    loss = compute_loss(x, y, step)
    loss.backward()
    opt.step()
    opt.zero_grad()
    xm.mark_step()
print(loss)
