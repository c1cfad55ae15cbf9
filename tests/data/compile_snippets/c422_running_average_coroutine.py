"""A training step that keeps a smoothed loss for the progress display with a classic running
average coroutine: the step sends each loss into it and gets the new average back."""
import torch
import torch.nn as nn

torch.manual_seed(0)


def running_average():
    total, count, average = 0.0, 0, None
    while True:
        value = yield average
        total = total + value
        count += 1
        average = total / count


model = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 1))
opt = torch.optim.SGD(model.parameters(), lr=0.05)
smoother = running_average()
next(smoother)


@torch.compile
def train_loss(x, y):
    loss = nn.functional.mse_loss(model(x).squeeze(-1), y)
    smooth = smoother.send(loss.detach())
    return loss, smooth


for step in range(5):
    x = torch.randn(32, 16)
    loss, smooth = train_loss(x, x.sum(-1))
    loss.backward()
    opt.step()
    opt.zero_grad()
print(f"smoothed loss {smooth.item():.4f}")
