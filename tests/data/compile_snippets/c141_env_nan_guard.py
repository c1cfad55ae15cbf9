"""Gaudi fine-tuning script: a debugging switch read from an environment variable decides whether
the MLP block sanitises non-finite activations; the model is compiled for HPU when the Habana
bridge is present."""
import os

import torch
import torch.nn as nn

try:
    import habana_frameworks.torch.core as htcore
    BACKEND = "hpu_backend"
except ImportError:
    htcore, BACKEND = None, "inductor"

torch.manual_seed(0)


def _nan_guard_enabled():
    return os.environ.get("DEBUG_NAN_GUARD", "0").lower() in ("1", "true")


class MLPBlock(nn.Module):
    def __init__(self, dim=32):
        super().__init__()
        self.norm = nn.LayerNorm(dim)
        self.fc1 = nn.Linear(dim, 4 * dim)
        self.fc2 = nn.Linear(4 * dim, dim)

    def forward(self, x):
        h = self.fc1(self.norm(x)).relu()
        if _nan_guard_enabled():
            h = torch.nan_to_num(h, nan=0.0, posinf=1e4, neginf=-1e4)
        return x + self.fc2(h)


model = nn.Sequential(MLPBlock(), MLPBlock(), nn.Linear(32, 1))
cmodel = torch.compile(model, backend=BACKEND)
opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
for step in range(5):
    x, y = torch.randn(8, 32), torch.randn(8, 1)
    loss = (cmodel(x) - y).pow(2).mean()
    loss.backward()
    if htcore is not None:
        htcore.mark_step()
    opt.step()
    opt.zero_grad()
    if htcore is not None:
        htcore.mark_step()
print(loss.detach())
