import torch

torch.manual_seed(0)


@torch.compile
def sgd_update(w, g, lr):
    return w - lr * g


w = torch.randn(4)
for step in range(12):
    w = sgd_update(w, torch.randn(4), 0.1 / (1 + step))
