"""Spike-robust training: a small guard object keeps the recent losses in a bounded deque and
the compiled loss function zeroes out a batch whose loss jumps far above the recent average,
which keeps a few corrupted samples from blowing up the optimizer state."""
import collections

import torch
import torch.nn as nn

torch.manual_seed(0)


class SpikeGuard:
    def __init__(self, window=16, factor=4.0):
        self.history = collections.deque(maxlen=window)
        self.factor = factor

    def filter(self, loss):
        self.history.append(loss.detach())
        recent = torch.stack(list(self.history)).mean()
        return torch.where(loss > self.factor * recent, torch.zeros_like(loss), loss)


model = nn.Sequential(nn.Linear(16, 32), nn.Tanh(), nn.Linear(32, 1))
guard = SpikeGuard()
opt = torch.optim.SGD(model.parameters(), lr=0.01)


@torch.compile
def compute_loss(x, y):
    loss = nn.functional.mse_loss(model(x), y)
    return guard.filter(loss)


for step in range(12):
    loss = compute_loss(torch.randn(8, 16), torch.randn(8, 1))
    loss.backward()
    opt.step()
    opt.zero_grad()
print(f"loss {loss.item():.4f}, history {len(guard.history)}")
