"""Gaudi training with a debug log of the per-step loss and prediction mean that should cost
nothing in production: the compiled step only formats the values when the logger is enabled for
DEBUG, and the job runs with the default WARNING level."""
import logging

import habana_frameworks.torch.core as htcore
import torch
import torch.nn as nn
import torch.nn.functional as F

logger = logging.getLogger("trainer.step")
torch.manual_seed(0)


class Regressor(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(16, 64), nn.ReLU(), nn.Linear(64, 1))

    def forward(self, x):
        return self.body(x)


model = Regressor()
opt = torch.optim.AdamW(model.parameters(), lr=1e-3)


@torch.compile(backend="hpu_backend")
def train_step(x, y):
    pred = model(x)
    loss = F.smooth_l1_loss(pred, y)
    if logger.isEnabledFor(logging.DEBUG):
        logger.debug("loss=%.4f pred_mean=%.4f", loss.item(), pred.mean().item())
    return loss


for _ in range(5):
    loss = train_step(torch.randn(32, 16), torch.randn(32, 1))
    loss.backward()
    opt.step()
    opt.zero_grad()
    htcore.mark_step()
print(f"loss {loss.item():.4f}")
