import torch
import torch.nn as nn

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 1))
opt = torch.optim.SGD(model.parameters(), lr=0.01)
max_norm = 1.0


@torch.compile
def grad_norm(params):
    total = torch.stack([p.grad.norm() for p in params]).norm()
    if total > max_norm:
        print("clipping")
    return total


for step in range(6):
    opt.zero_grad()
    loss = model(torch.randn(8, 16)).pow(2).mean()
    loss.backward()
    grad_norm(list(model.parameters()))
    opt.step()
