import torch

torch.manual_seed(0)


@torch.compile
def project(x, w):
    y = x @ w
    print("projected", y.shape)
    return y.relu()


w = torch.randn(8, 4)
for _ in range(3):
    project(torch.randn(5, 8), w)
