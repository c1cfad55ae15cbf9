"""The twelfth held-out set's graph-break kinds, statically (no torch): a logger asked for its level
in the compiled region (one finding at the test, none in the body it guards), a
torch.autograd.functional call, the nn.Parameter constructor, and a tensor used as a slice bound.
Each kind was measured on torch 2.13 (fixtures in fixtures/HPU012 carry the counts)."""
from __future__ import annotations

from textwrap import dedent

import pytest

from hpulint import Config, lint_source

COMPILE = ("HPU012", "HPU013", "HPU014", "HPU015", "HPU016", "HPU017")


def found(src: str) -> list:
    return [(f.code, f.line) for f in lint_source(dedent(src), "t.py", Config()) if f.code in COMPILE]


def messages(src: str, code: str) -> list:
    return [f.message for f in lint_source(dedent(src), "t.py", Config()) if f.code == code]


LOGGER = """\
import logging

import torch

logger = logging.getLogger(__name__)
{setup}


@torch.compile
def step(x):
    y = x.relu().sum()
    if {test}:
        logger.debug("sum %.3f", y.item())
    return y


for _ in range(3):
    step(torch.randn(8))
"""


@pytest.mark.parametrize("setup, test, expected", [
    ("", "logger.isEnabledFor(logging.DEBUG)", [("HPU012", 12)]),  # the test, once; not the body
    ("", "logger.getEffectiveLevel() <= logging.DEBUG", [("HPU012", 12)]),
    ("VERBOSE = True", "VERBOSE and logger.isEnabledFor(logging.DEBUG)", [("HPU012", 12)]),
    ("DEBUG = logger.isEnabledFor(logging.DEBUG)", "DEBUG", [("HPU012", 13)]),  # asked once: the body's read
])
def test_a_logger_asked_for_its_level_in_the_region(setup, test, expected):
    assert found(LOGGER.format(setup=setup, test=test)) == expected


def test_the_logger_message_names_the_method():
    [msg] = messages(LOGGER.format(setup="", test="logger.isEnabledFor(logging.DEBUG)"), "HPU012")
    assert "`isEnabledFor()` of a logger" in msg and "logging.Logger method not supported" in msg


def test_a_logger_asked_in_the_eager_loop_is_not_reported():
    src = """\
    import logging

    import torch

    logger = logging.getLogger(__name__)


    @torch.compile
    def step(x):
        return x.relu().sum()


    for _ in range(3):
        y = step(torch.randn(8))
        if logger.isEnabledFor(logging.DEBUG):
            logger.debug("sum %.3f", y.item())
    """
    assert found(src) == []


FUNCTIONAL = """\
import torch
import torch.nn as nn
{imports}

net = nn.Linear(2, 1)


def grads(p):
    return {call}


@torch.compile
def loss_fn(p):
    return grads(p).pow(2).sum()


for _ in range(3):
    loss_fn(torch.rand(2))
"""


@pytest.mark.parametrize("imports, call, expected", [
    ("", "torch.autograd.functional.jacobian(lambda q: net(q).sum(), p)", [("HPU012", 9)]),
    ("", "torch.autograd.functional.hessian(lambda q: net(q).sum(), p)", [("HPU012", 9)]),
    ("from torch.autograd.functional import vjp", "vjp(lambda q: net(q).sum(), p)[1]", [("HPU012", 9)]),
    ("from torch.func import jacrev", "jacrev(lambda q: net(q).sum())(p)", []),  # traced
])
def test_torch_autograd_functional_in_the_region(imports, call, expected):
    assert found(FUNCTIONAL.format(imports=imports, call=call)) == expected


PARAMETER = """\
import torch
import torch.nn as nn


class Mixer(nn.Module):
    def __init__(self):
        super().__init__()
        self.gates = nn.ParameterDict({init})

    def gate(self, name):
        if name not in self.gates:
            self.gates[name] = nn.Parameter(torch.zeros(8))
        return self.gates[name]

    def forward(self, feats):
        return sum(torch.sigmoid(self.gate(k)) * x for k, x in feats.items())


model = {model}
for _ in range(3):
    model({{"a": torch.randn(2, 8), "b": torch.randn(2, 8)}}).sum().backward()
"""


@pytest.mark.parametrize("init, model, expected", [
    ("", "torch.compile(Mixer())", [("HPU012", 12)]),
    ("", "Mixer()", []),  # not compiled
])
def test_a_parameter_made_in_the_region(init, model, expected):
    assert found(PARAMETER.format(init=init, model=model)) == expected


def test_a_parameter_made_in_init_is_not_reported():
    src = """\
    import torch
    import torch.nn as nn


    class Scale(nn.Module):
        def __init__(self):
            super().__init__()
            self.scale = nn.Parameter(torch.ones(8))

        def forward(self, x):
            return x * self.scale


    model = torch.compile(Scale())
    model(torch.randn(2, 8))
    """
    assert found(src) == []


SLICE = """\
import torch


@torch.compile
def trim(ids, mask):
    {bound}
    return {use}


for n in (5, 9, 3):
    mask = torch.zeros(2, 16, dtype=torch.long)
    mask[:, :n] = 1
    trim(torch.randint(0, 9, (2, 16)), mask)
"""


@pytest.mark.parametrize("bound, use, expected", [
    ("n = mask.sum(-1).max()", "ids[:, :n], mask[:, :n]", [("HPU012", 7)]),  # one finding for the line
    ("n = mask.sum(-1).max()", "ids.narrow(1, 0, n)", [("HPU012", 7)]),
    ("n = mask.shape[1] // 2", "ids[:, :n]", []),  # a size: traced
    ("n = 8", "ids[:, n:]", []),
    ("n = mask.sum(-1).max()", "ids * (torch.arange(16) < n)", []),  # masked, not sliced
])
def test_a_tensor_as_a_slice_bound(bound, use, expected):
    assert found(SLICE.format(bound=bound, use=use)) == expected


def test_a_slice_bound_with_captured_scalars_is_not_reported():
    src = "import torch\ntorch._dynamo.config.capture_scalar_outputs = True\n" + SLICE.format(
        bound="n = mask.sum(-1).max()", use="ids[:, :n]").split("import torch\n", 1)[1]
    assert found(src) == []
