import logging

import torch
import torch.nn.functional as F

torch.manual_seed(0)

logger = logging.getLogger("train")


@torch.compile
def loss_fn(logits, labels):
    loss = F.cross_entropy(logits, labels)
    logger.debug("loss %s", loss)
    return loss


for _ in range(3):
    loss_fn(torch.randn(4, 3), torch.randint(0, 3, (4,)))
