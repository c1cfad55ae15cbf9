import torch

torch.manual_seed(0)


@torch.compile
def expand_rows(x, counts):
    return x.repeat_interleave(counts, dim=0).sum(0)


for i in range(4):
    expand_rows(torch.randn(3, 2), torch.tensor([1, i + 1, 2]))
