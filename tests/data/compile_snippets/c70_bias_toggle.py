import torch

torch.manual_seed(0)
b = torch.randn(4)


@torch.compile
def affine(x, use_bias):
    y = x * 2
    if use_bias:
        y = y + b
    return y


for step in range(12):
    affine(torch.randn(4), step % 2 == 0)
