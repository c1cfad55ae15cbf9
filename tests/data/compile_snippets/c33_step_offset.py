import torch

torch.manual_seed(0)


@torch.compile
def position_bias(x, step):
    return x + step * 0.5


for step in range(12):
    position_bias(torch.randn(3), step)
