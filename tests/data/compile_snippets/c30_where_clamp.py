import torch

torch.manual_seed(0)


@torch.compile
def safe_div(a, b):
    denom = torch.where(b.abs() < 1e-6, torch.ones_like(b), b)
    return a / denom


for _ in range(5):
    safe_div(torch.randn(7), torch.randn(7))
