import torch
import torch.nn as nn

torch.manual_seed(0)

net = nn.Sequential(nn.Linear(6, 6), nn.Tanh(), nn.Linear(6, 1))


@torch.compile
def evaluate(batch, target):
    err = (net(batch) - target).abs().mean()
    done = err.item() < 0.01
    return err, done


with torch.no_grad():
    for _ in range(4):
        evaluate(torch.randn(5, 6), torch.randn(5, 1))
