import torch

torch.manual_seed(0)

buffers = []


@torch.compile
def total(x):
    out = x
    for b in buffers:
        out = out + b
    return out


for i in range(11):
    buffers.append(torch.ones(2) * i)
    total(torch.zeros(2))
