import torch

torch.manual_seed(0)


@torch.compile
def power_iter(a, v):
    prev = torch.zeros_like(v)
    while (v - prev).norm() > 1e-3:
        prev = v
        v = a @ v
        v = v / v.norm()
    return v


a = torch.eye(3) * 2
for _ in range(2):
    power_iter(a, torch.randn(3))
