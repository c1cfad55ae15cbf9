import logging

import torch
import torch.nn as nn
import torch.nn.functional as F

logging.basicConfig(level=logging.INFO)
log = logging.getLogger("train")
torch.manual_seed(0)

model = nn.Sequential(nn.Linear(20, 64), nn.GELU(), nn.Linear(64, 5))
opt = torch.optim.AdamW(model.parameters(), lr=1e-3)


@torch.compile
def train_step(x, y):
    loss = F.cross_entropy(model(x), y)
    assert not torch.isnan(loss), "loss is NaN"
    loss.backward()
    log.info("loss %.4f", loss.item())
    return loss


for step in range(4):
    x, y = torch.randn(16, 20), torch.randint(0, 5, (16,))
    train_step(x, y)
    opt.step()
    opt.zero_grad(set_to_none=True)
