"""Gaudi MLP trainer that estimates activation memory per step from inside the model.

To size the batch for the device, each block adds the byte size of the activation it keeps
for the backward pass to a module-level tally, read through the tensor's storage. The tally is
reset before each step and printed at the end.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

try:
    import habana_frameworks.torch.core as htcore  # Gaudi software stack: registers "hpu_backend"
except ImportError:  # CPU-only machine: same code, no step markers
    htcore = None

torch.manual_seed(0)
ACTIVATION_BYTES = {"total": 0}


class MeteredBlock(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.fc = nn.Linear(dim, dim)
        self.norm = nn.LayerNorm(dim)

    def forward(self, x):
        h = F.gelu(self.fc(self.norm(x)))
        ACTIVATION_BYTES["total"] += h.untyped_storage().nbytes()
        return x + h


model = nn.Sequential(*[MeteredBlock(64) for _ in range(3)], nn.Linear(64, 10))
compiled = torch.compile(model, backend="hpu_backend" if htcore else "eager")
opt = torch.optim.SGD(model.parameters(), lr=0.05)
for step in range(4):
    ACTIVATION_BYTES["total"] = 0
    loss = F.cross_entropy(compiled(torch.randn(32, 64)), torch.randint(0, 10, (32,)))
    loss.backward()
    opt.step()
    opt.zero_grad()
    if htcore:
        htcore.mark_step()
print(ACTIVATION_BYTES["total"], round(loss.item(), 3))
