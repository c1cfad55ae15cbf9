"""Training loop that reports a smoothed loss from a compiled helper with a default-argument window.

The helper keeps the recent losses in a list given as a default argument, an idiom for
function-local state that survives between calls: each call appends the new (detached) loss,
drops the oldest once there are more than five, and returns the mean of the window for the
progress bar.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
WINDOW = 5


@torch.compile
def smoothed(loss, _recent=[]):
    _recent.append(loss.detach())
    if len(_recent) > WINDOW:
        _recent.pop(0)
    return torch.stack(_recent).mean()


model = nn.Sequential(nn.Linear(10, 32), nn.ReLU(), nn.Linear(32, 1))
opt = torch.optim.SGD(model.parameters(), lr=0.05)
for step in range(8):
    x = torch.randn(16, 10)
    loss = F.mse_loss(model(x).squeeze(-1), x.sum(-1))
    loss.backward()
    opt.step()
    opt.zero_grad()
    shown = smoothed(loss)
print(round(shown.item(), 3))
