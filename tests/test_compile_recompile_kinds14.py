"""The fourteenth held-out set's recompile kinds, statically (no torch). Each kind was measured on
torch 2.13 (fixtures in fixtures/HPU017 carry the counts)."""
from __future__ import annotations

from textwrap import dedent

import pytest

from hpulint import Config, lint_source

COMPILE = ("HPU012", "HPU013", "HPU014", "HPU015", "HPU016", "HPU017")


def found(src: str) -> list:
    return [(f.code, f.line) for f in lint_source(dedent(src), "t.py", Config()) if f.code in COMPILE]


GRAD = """\
import torch
import torch.nn as nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(8, 8)

    def forward(self, x):
        return self.lin(x)


model = torch.compile(Net())


{deco}
def evaluate():
    with {eval_cm}:
        return model(torch.randn(2, 8))


for step in range(4):
    with {roll_cm}:
        model(torch.randn(2, 8))
    model(torch.randn(2, 8)).sum().backward()
    evaluate()
"""


@pytest.mark.parametrize("deco, eval_cm, roll_cm, expected", [
    ("", "torch.inference_mode()", "torch.no_grad()", [("HPU017", 14)]),  # grad, no_grad, inference: 2 recompiles
    ("@torch.inference_mode()", "torch.autocast('cpu', enabled=False)", "torch.set_grad_enabled(False)",
     [("HPU017", 14)]),
    ("", "torch.no_grad()", "torch.set_grad_enabled(False)", []),  # one no_grad state: 1 recompile
    ("", "torch.inference_mode(False)", "torch.no_grad()", []),  # inference_mode(False): grad on
    ("", "torch.inference_mode()", "torch.set_grad_enabled(flag)", []),  # not known
])
def test_grad_modes_around_the_calls(deco, eval_cm, roll_cm, expected):
    assert found(GRAD.format(deco=deco, eval_cm=eval_cm, roll_cm=roll_cm)) == expected
