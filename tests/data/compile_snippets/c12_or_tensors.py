import torch

torch.manual_seed(0)


@torch.compile
def sanitize(a, b):
    if torch.isinf(a).any() or torch.isinf(b).any():
        return torch.zeros_like(a)
    return a + b


for _ in range(3):
    sanitize(torch.randn(4), torch.randn(4))
