import torch

torch.manual_seed(0)


@torch.compile
def flatten_if_needed(x):
    if x.dim() > 2:
        x = x.flatten(1)
    if x.size(0) == 1:
        x = x.squeeze(0)
    return x.sum(-1)


for _ in range(4):
    flatten_if_needed(torch.randn(4, 2, 3))
