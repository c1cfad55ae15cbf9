import logging

import torch

logging.basicConfig(level=logging.WARNING)
log = logging.getLogger("train")


@torch.compile
def forward(x, w):
    h = x @ w
    log.debug("hidden norm %s", h.norm())
    return h.relu()


w = torch.randn(4, 4)
for _ in range(4):
    forward(torch.randn(2, 4), w)
