"""Gaudi (`hpu_backend`) bf16 regression training that guards against loss spikes: the compiled
loss function checks its result with `math.isfinite` and returns `None` for a non-finite loss,
which the loop takes as "skip this batch"."""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

try:
    import habana_frameworks.torch.core as htcore
    BACKEND = "hpu_backend"
except ImportError:  # CPU run without the Gaudi stack
    htcore = None
    BACKEND = "eager"

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(16, 64), nn.SiLU(), nn.Linear(64, 1))


@torch.compile(backend=BACKEND)
def guarded_loss(x, y):
    with torch.autocast("cpu", dtype=torch.bfloat16):
        pred = model(x).float()
    loss = F.smooth_l1_loss(pred.squeeze(-1), y)
    if not math.isfinite(loss):
        return None
    return loss


opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
skipped = 0
for _ in range(5):
    x = torch.randn(32, 16)
    loss = guarded_loss(x, x.sum(-1))
    if loss is None:
        skipped += 1
        continue
    loss.backward()
    opt.step()
    opt.zero_grad()
    if htcore is not None:
        htcore.mark_step()
print(f"loss {loss.item():.4f}, skipped {skipped}")
