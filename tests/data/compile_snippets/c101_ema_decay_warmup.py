import copy

import torch
import torch.nn as nn

torch.manual_seed(0)

model = nn.Sequential(nn.Linear(16, 32), nn.Tanh(), nn.Linear(32, 4))
ema_model = copy.deepcopy(model).requires_grad_(False)
opt = torch.optim.SGD(model.parameters(), lr=0.05)


@torch.compile
def ema_update(ema_params, params, decay):
    for e, p in zip(ema_params, params):
        e.mul_(decay).add_(p.detach(), alpha=1 - decay)


for step in range(12):
    model(torch.randn(8, 16)).pow(2).mean().backward()
    opt.step()
    opt.zero_grad()
    decay = min(0.999, (1 + step) / (10 + step))
    ema_update(list(ema_model.parameters()), list(model.parameters()), decay)
print(next(ema_model.parameters()).sum())
