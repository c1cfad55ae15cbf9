import logging

import torch
import torch.nn as nn
import habana_frameworks.torch.core as htcore

logger = logging.getLogger(__name__)
torch.manual_seed(0)


class Adapter(nn.Module):
    def __init__(self, dim=24, r=4):
        super().__init__()
        self.down = nn.Linear(dim, r)
        self.up = nn.Linear(r, dim)

    def forward(self, x):
        h = self.up(torch.relu(self.down(x)))
        logger.debug(f"adapter residual norm {h.norm()}")
        return x + h


model = torch.compile(Adapter(), backend="hpu_backend")
opt = torch.optim.Adam(model.parameters(), lr=1e-3)
for _ in range(4):
    model(torch.randn(8, 24)).pow(2).mean().backward()
    opt.step()
    opt.zero_grad()
    htcore.mark_step()
