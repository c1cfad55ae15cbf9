from dataclasses import dataclass

import torch

torch.manual_seed(0)


@dataclass
class Cfg:
    n_iter: int = 1


cfg = Cfg()


@torch.compile
def smooth(x):
    for _ in range(cfg.n_iter):
        x = (x + x.roll(1)) / 2
    return x


for n in range(1, 13):
    cfg.n_iter = n
    smooth(torch.randn(16))
