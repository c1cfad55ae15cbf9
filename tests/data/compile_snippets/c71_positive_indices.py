import torch

torch.manual_seed(0)


@torch.compile
def gather_positive(x, table):
    idx = (x > 0).nonzero().squeeze(-1)
    return table[idx].sum(0)


table = torch.randn(10, 3)
for _ in range(4):
    gather_positive(torch.randn(10), table)
