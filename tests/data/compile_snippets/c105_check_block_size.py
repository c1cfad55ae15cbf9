import torch

torch.manual_seed(0)


@torch.compile(dynamic=True)
def blockwise_mean(x, block: int):
    n = x.shape[0]
    torch._check(n % block == 0)
    return x.reshape(n // block, block, -1).mean(dim=1)


for rows in (32, 48, 64, 96):
    out = blockwise_mean(torch.randn(rows, 8), 16)
print(out.shape)
