import torch

torch.manual_seed(0)


@torch.compile
def keep_top(x, ratio):
    k = max(1, int(x.shape[-1] * ratio))
    return torch.topk(x, k, dim=-1).values.mean()


for n in range(8, 64, 4):
    keep_top(torch.randn(2, n), 0.25)
