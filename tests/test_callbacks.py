"""`optimizer.step(closure)` runs the closure every step (LBFGS evaluates it several times): a host
read there is a per-step sync, wherever the closure is defined. The cases are written for these
tests; none is copied from a repository."""
from __future__ import annotations

import textwrap

from hpulint.engine import lint_source

SRC = """
import torch
import torch.nn as nn
import torch.optim as optim

seq = nn.Linear(4, 1).to("hpu")
criterion = nn.MSELoss()
optimizer = optim.LBFGS(seq.parameters(), lr=0.8)
inp = torch.randn(8, 4, device="hpu")
target = torch.randn(8, 1, device="hpu")
for i in range(10):
    def closure():
        optimizer.zero_grad()
        loss = criterion(seq(inp), target)
        print("loss:", loss.item())
        loss.backward()
        return loss
    {step}
"""


def codes(src: str) -> list:
    return [(f.code, f.line) for f in lint_source(textwrap.dedent(src), "train.py")]


def test_a_closure_passed_to_the_optimizer_step_runs_every_step():
    assert ("HPU005", 15) in codes(SRC.format(step="optimizer.step(closure)"))


def test_a_closure_only_defined_is_not_called():
    assert ("HPU005", 15) not in codes(SRC.format(step="optimizer.step()"))
