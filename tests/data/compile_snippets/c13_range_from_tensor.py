import torch

torch.manual_seed(0)


@torch.compile
def repeat_apply(x, n):
    for _ in range(int(n)):
        x = torch.sin(x)
    return x


for k in range(3):
    repeat_apply(torch.randn(4), torch.tensor(2))
