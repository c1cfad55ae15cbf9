import torch


@torch.compile
def first_hit(x, thr):
    pos = (x > thr).nonzero()
    return pos.sum()


torch.manual_seed(0)
for _ in range(4):
    first_hit(torch.randn(30), 0.5)
