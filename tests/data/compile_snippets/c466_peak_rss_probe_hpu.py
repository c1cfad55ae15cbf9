"""Gaudi (`hpu_backend`) memory study of a residual MLP: each block records the process's peak
resident set size after its computation with `resource.getrusage(...).ru_maxrss` in a
module-level table keyed by the block's name, so the run ends with a per-block memory report."""
import resource

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
PEAK_RSS_KB = {}


class Block(nn.Module):
    def __init__(self, name, dim):
        super().__init__()
        self.name = name
        self.norm = nn.LayerNorm(dim)
        self.fc1, self.fc2 = nn.Linear(dim, 4 * dim), nn.Linear(4 * dim, dim)

    def forward(self, x):
        out = x + self.fc2(F.gelu(self.fc1(self.norm(x))))
        PEAK_RSS_KB[self.name] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        return out


model = nn.Sequential(*[Block(f"block{i}", 64) for i in range(3)], nn.Linear(64, 10))
step_model = torch.compile(model, backend=BACKEND)
opt = torch.optim.SGD(model.parameters(), lr=0.01)
for step in range(4):
    x, y = torch.randn(32, 64), torch.randint(0, 10, (32,))
    loss = F.cross_entropy(step_model(x), y)
    loss.backward()
    opt.step()
    opt.zero_grad()
    if htcore is not None:
        htcore.mark_step()
for name, kb in PEAK_RSS_KB.items():
    print(name, f"{kb / 1024:.1f} MiB")
