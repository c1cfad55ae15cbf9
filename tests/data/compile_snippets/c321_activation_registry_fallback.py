"""A configurable MLP block whose activation is looked up by name in a registry inside the
compiled forward; names the registry does not know are reported through sys.exc_info()
into a warnings list kept by the caller, and the block falls back to GELU."""
import sys

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)

ACTIVATIONS = {"relu": F.relu, "silu": F.silu, "tanh": torch.tanh}


def resolve_activation(name, fallback=F.gelu):
    try:
        return ACTIVATIONS[name], None
    except KeyError:
        exc_type, _, _ = sys.exc_info()
        return fallback, exc_type.__name__


class ConfigurableMLP(nn.Module):
    def __init__(self, act_name, dim=32):
        super().__init__()
        self.act_name = act_name
        self.up = nn.Linear(dim, 4 * dim)
        self.down = nn.Linear(4 * dim, dim)

    def forward(self, x):
        act, problem = resolve_activation(self.act_name)
        return x + self.down(act(self.up(x))), problem


block = ConfigurableMLP("swiglu")
compiled = torch.compile(block)
opt = torch.optim.SGD(block.parameters(), lr=0.01)
problems = []
for _ in range(4):
    out, problem = compiled(torch.randn(4, 10, 32))
    problems.append(problem)
    out.pow(2).mean().backward()
    opt.step()
    opt.zero_grad()
print(problems)
