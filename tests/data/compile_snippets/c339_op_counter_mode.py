"""Op-coverage audit while porting a model: a small TorchFunctionMode subclass counts the torch
functions it sees, and the training loop enters it only for a short window of steps (steps 3 and
4) around the compiled model's call, to list which operators the model uses; the other steps run
without it."""
import collections

import torch
import torch.nn as nn
from torch.overrides import TorchFunctionMode

torch.manual_seed(0)


class OpCounter(TorchFunctionMode):
    def __init__(self):
        super().__init__()
        self.counts = collections.Counter()

    def __torch_function__(self, func, types, args=(), kwargs=None):
        self.counts[getattr(func, "__name__", str(func))] += 1
        return func(*args, **(kwargs or {}))


model = nn.Sequential(nn.Linear(12, 24), nn.GELU(), nn.LayerNorm(24), nn.Linear(24, 4))
compiled = torch.compile(model)
opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
audit = OpCounter()
for step in range(6):
    x, y = torch.randn(8, 12), torch.randint(0, 4, (8,))
    if step in (3, 4):
        with audit:
            logits = compiled(x)
    else:
        logits = compiled(x)
    loss = nn.functional.cross_entropy(logits, y)
    loss.backward()
    opt.step()
    opt.zero_grad()
print(sorted(audit.counts.items())[:5], loss.item())
