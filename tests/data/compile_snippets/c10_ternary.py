import torch

torch.manual_seed(0)


@torch.compile
def signed_sqrt(x):
    total = x.sum()
    out = x.abs().sqrt() if total > 0 else -x.abs().sqrt()
    return out


for _ in range(5):
    signed_sqrt(torch.randn(6))
