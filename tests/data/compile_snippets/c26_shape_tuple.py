import torch

torch.manual_seed(0)


@torch.compile
def reshape_all(x, dims):
    return x.reshape(dims).sum()


for extra in range(0, 10):
    dims = (2, 3) + (1,) * extra
    reshape_all(torch.randn(6), dims)
