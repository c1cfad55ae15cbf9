import functools

import torch

torch.manual_seed(0)


def weighted_mse(pred, target, weight):
    return ((pred - target) ** 2 * weight).mean()


for epoch in range(5):
    loss_fn = torch.compile(functools.partial(weighted_mse, weight=1.0 + 0.5 * epoch))
    for _ in range(2):
        loss = loss_fn(torch.randn(8, 4), torch.randn(8, 4))
print(loss)
