import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)

model = nn.Linear(8, 1)
WARMUP = 5


@torch.compile
def scaled_loss(x, y, step):
    pred = model(x)
    scale = min(1.0, (step + 1) / WARMUP)
    return F.mse_loss(pred, y) * scale


for step in range(10):
    x, y = torch.randn(6, 8), torch.randn(6, 1)
    loss = scaled_loss(x, y, step)
    loss.backward()
    with torch.no_grad():
        for p in model.parameters():
            p -= 0.05 * p.grad
            p.grad = None
print(loss)
