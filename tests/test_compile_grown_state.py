"""The twelfth held-out set's state kinds, statically (no torch): a step counter on another object
bumped by the loop that calls the compiled function (HPU016), and a cache grown on demand inside
the compiled region (an int attribute: HPU016; a re-registered buffer: HPU015). Each kind was
measured on torch 2.13 (fixtures in fixtures/HPU015 and HPU016 carry the counts)."""
from __future__ import annotations

from textwrap import dedent

import pytest

from hpulint import Config, lint_source

COMPILE = ("HPU012", "HPU013", "HPU014", "HPU015", "HPU016", "HPU017")


def found(src: str) -> list:
    return [(f.code, f.line) for f in lint_source(dedent(src), "t.py", Config()) if f.code in COMPILE]


def messages(src: str, code: str) -> list:
    return [f.message for f in lint_source(dedent(src), "t.py", Config()) if f.code == code]


TRAINER = """\
import torch
import torch.nn as nn


class Trainer:
    def __init__(self):
        self.global_step = {start}

    def fit(self, module, step_fn):
        module.trainer = self
        for _ in range(12):
            step_fn(torch.randn(4, 8))
            {bump}


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(8, 8)
        self.trainer = None

    def forward(self, x):
        return self.lin(x) * min(1.0, (self.trainer.global_step + 1) / 50)


net = Net()
Trainer().fit(net, {model})
"""


@pytest.mark.parametrize("start, bump, model, expected", [
    ("0", "self.global_step += 1", "torch.compile(net)", [("HPU016", 23)]),
    ("0", "self.global_step = self.global_step + 1", "torch.compile(net)", [("HPU016", 23)]),
    ("0", "self.global_step += 1", "net", []),  # not compiled
    ("torch.zeros(())", "self.global_step += 1", "torch.compile(net)", []),  # a tensor counter: in the graph
    ("0", "pass", "torch.compile(net)", []),  # never changes
])
def test_a_step_counter_of_the_trainer_read_in_the_region(start, bump, model, expected):
    assert found(TRAINER.format(start=start, bump=bump, model=model)) == expected


def test_the_step_counter_message_names_the_bump():
    [msg] = messages(TRAINER.format(start="0", bump="self.global_step += 1", model="torch.compile(net)"), "HPU016")
    assert "`self.trainer.global_step`" in msg and "`self.global_step += 1`" in msg and "(fit())" in msg


STATE = """\
import torch


class State:
    def __init__(self):
        self.step = 0


state = State()


@torch.compile
def scale(x):
    return x * (state.step % 4)


for _ in range(12):
    scale(torch.randn(4))
    {bump}
"""


@pytest.mark.parametrize("bump, expected", [
    ("state.step += 1", [("HPU016", 14)]),
    ("print(state.step)", []),
])
def test_a_module_level_object_bumped_by_the_loop(bump, expected):
    assert found(STATE.format(bump=bump)) == expected


CACHE = """\
import torch
import torch.nn as nn


class Table(nn.Module):
    def __init__(self):
        super().__init__()
        self.cached = 16
        self.register_buffer("table", torch.ones(16, 4), persistent=False)

    def grow(self, n):
        {grow}

    def forward(self, x):
        n = x.shape[0]
        if {test}:
            self.grow(n)
        return x * self.table[:n]


model = torch.compile(Table())
for n in (8, 12, 20, 24, 40, 33, 64, 10, 80):
    model(torch.randn(n, 4))
"""


@pytest.mark.parametrize("grow, test, expected", [
    ("self.cached = n", "n > self.cached", [("HPU016", 16)]),
    ("self.cached = n", "self.cached < n", [("HPU016", 16)]),
    ("self.register_buffer('table', torch.ones(n, 4), persistent=False)", "n > self.table.shape[0]",
     [("HPU015", 16)]),
    ("self.register_buffer('table', torch.ones(n, 4), persistent=False)", "n > self.table.size(0)",
     [("HPU015", 16)]),
    ("self.cached = n", "self.cached > 100", []),  # compared with a constant: no size comes in
    ("pass", "n > self.cached", []),  # nothing grows
])
def test_a_cache_grown_in_the_region(grow, test, expected):
    assert found(CACHE.format(grow=grow, test=test)) == expected


def test_a_cache_grown_in_init_only_is_not_reported():
    src = CACHE.format(grow="self.cached = n", test="n > self.cached").replace(
        "model = torch.compile(Table())", "model = Table()")
    assert found(src) == []
