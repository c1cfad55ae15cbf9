import torch
import torch.nn as nn

torch.manual_seed(0)

model = nn.Linear(5, 1)
opt = torch.optim.SGD(model.parameters(), lr=0.01)


@torch.compile
def compute(x, y):
    loss = nn.functional.mse_loss(model(x), y)
    if torch.isnan(loss):
        loss = torch.zeros_like(loss)
    return loss


for _ in range(4):
    loss = compute(torch.randn(8, 5), torch.randn(8, 1))
    loss.backward()
    opt.step()
    opt.zero_grad()
