"""The eighteenth held-out set's kinds, statically (no torch): `torch.unique` on a helper's parameter,
`torch.jit.fork`/`wait`, `ContextVar.get()`/`set()` and `Tensor.resize_` in a compiled region
(HPU012, HPU014); a pooling window computed from the input's size over 3 or more input sizes
(HPU015); a layer replaced by a larger one between calls (HPU016); a parameter used as a dimension
given 3 or more values, and a `p.grad is None` test over parameters of a module that runs a picked
subset of its submodules (HPU017). Each snippet here, bad and look-alike, was measured on torch 2.13
(CPU, `eager` backend, TORCH_LOGS=graph_breaks,recompiles): the counts are in the comments."""
from __future__ import annotations

from textwrap import dedent

import pytest

from hpulint import Config, lint_source

COMPILE = ("HPU012", "HPU013", "HPU014", "HPU015", "HPU016", "HPU017")


def found(src: str) -> list:
    return [(f.code, f.line) for f in lint_source(dedent(src), "t.py", Config()) if f.code in COMPILE]


def messages(src: str) -> list:
    return [f.message for f in lint_source(dedent(src), "t.py", Config()) if f.code in COMPILE]


# --- graph breaks -------------------------------------------------------------------------------

UNIQUE_IN_HELPER = """\
import torch


def distinct_ids(ids):
    return torch.unique(ids)


@torch.compile
def score(x, ids):
    seen = distinct_ids(ids)
    return x.sum() * seen.numel()


def draw(i):
    return torch.randn(4), torch.tensor([0, 2, 2, i])


for i in range(3):
    score(*draw(i))
"""
# measured: 2 graphs, a break at line 5 (the unique), 1 recompile of the resumed frame

UNIQUE_OUTSIDE = """\
import torch


def distinct_ids(ids):
    return torch.unique(ids)


@torch.compile
def score(x, seen):
    return x.sum() * seen.float().sum()


for i in range(3):
    score(torch.randn(4), distinct_ids(torch.tensor([0, 2, 2, i])))
"""
# measured: no break (2 graphs: the input's size becomes dynamic once)


def test_unique_on_a_helper_parameter():
    assert found(UNIQUE_IN_HELPER) == [("HPU014", 5)]
    assert "output shape depends on the data" in messages(UNIQUE_IN_HELPER)[0]
    assert found(UNIQUE_OUTSIDE) == []


FORK = """\
import torch
import torch.nn as nn


class Pair(nn.Module):
    def __init__(self):
        super().__init__()
        self.a = nn.Linear(8, 8)
        self.b = nn.Linear(8, 8)

    def forward(self, x):
        job = torch.jit.fork(self.a, x)
        y = self.b(x)
        return torch.jit.wait(job) + y


pair = torch.compile(Pair())
for _ in range(3):
    pair(torch.randn(2, 8))
"""
# measured: a break at each of the two lines (12 and 14)

FORK_EAGER = """\
import torch


@torch.compile
def double(x):
    return x * 2


jobs = [torch.jit.fork(double, torch.randn(4)) for _ in range(3)]
outs = [torch.jit.wait(j) for j in jobs]
"""
# measured: 1 graph, no break


def test_jit_fork_and_wait():
    assert found(FORK) == [("HPU012", 12), ("HPU012", 14)]
    assert "marked as skipped" in messages(FORK)[0]
    assert found(FORK_EAGER) == []


CONTEXTVAR = """\
import contextvars

import torch
import torch.nn as nn

gain = contextvars.ContextVar("gain", default=1.0)


class Scaled(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(4, 4)

    def forward(self, x):
        g = gain.get()
        return self.proj(x) * g


model = torch.compile(Scaled())
for value in (0.5, 1.0, 2.0):
    token = gain.set(value)
    model(torch.randn(2, 4))
    gain.reset(token)
"""
# measured: a break at line 15 ("Dynamo does not know how to trace method `get` of class `ContextVar`"),
# 1 recompile (the gain the resumed frame receives)

CONTEXTVAR_OUTSIDE = """\
import contextvars

import torch
import torch.nn as nn

gain = contextvars.ContextVar("gain", default=1.0)


class Scaled(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(4, 4)

    def forward(self, x, g):
        return self.proj(x) * g


model = torch.compile(Scaled())
for _ in range(3):
    model(torch.randn(2, 4), torch.tensor(gain.get()))
"""
# measured: 1 graph, no break

CONTEXTVAR_LOCAL = """\
import torch


class Box:
    def get(self):
        return 2.0


@torch.compile
def f(x):
    gain = Box()
    return x * gain.get()


for _ in range(3):
    f(torch.randn(4))
"""


def test_contextvar_read_in_forward():
    assert found(CONTEXTVAR) == [("HPU012", 15)]
    assert "ContextVar" in messages(CONTEXTVAR)[0]
    assert found(CONTEXTVAR_OUTSIDE) == []
    assert found(CONTEXTVAR_LOCAL) == []


RESIZE = """\
import torch


class Store:
    def __init__(self):
        self.rows = torch.empty(0, 3)
        self.push = torch.compile(self._push)

    def _push(self, x):
        n = self.rows.shape[0]
        self.rows.resize_(n + x.shape[0], 3)
        self.rows[n:] = x
        return x.sum()


store = Store()
for _ in range(4):
    store.push(torch.randn(2, 3))
"""
# measured: a break at line 11 ("Unsupported Tensor.resize_() call"), 2 recompiles

RESIZE_BEFORE = """\
import torch

bank = torch.empty(0, 3)
bank.resize_(8, 3)


@torch.compile
def f(x):
    return (x @ bank.T).sum()


for _ in range(3):
    f(torch.randn(2, 3))
"""
# measured: 1 graph, no break


def test_resize_in_a_compiled_method():
    assert found(RESIZE) == [("HPU012", 11)]
    assert "resize" in messages(RESIZE)[0]
    assert found(RESIZE_BEFORE) == []


# --- recompiles ---------------------------------------------------------------------------------

WINDOWS = """\
import math

import torch
import torch.nn.functional as F

SIDES = {sides}


@torch.compile
def pyramid(x):
    h = x.shape[-1]
    k = {window}
    return F.{pool}(x, kernel_size=k, stride=k).flatten(1)


for step, side in enumerate(SIDES):
    pyramid(torch.randn(1, 2, side, side))
"""


@pytest.mark.parametrize("sides, window, pool, expected", [
    # measured: 5 sizes, 5 graphs, 4 recompiles (guard at the pooling line)
    ("[8, 10, 12, 14, 16]", "math.ceil(h / 2)", "max_pool2d", [("HPU015", 13)]),
    ("[8, 10, 12, 14, 16]", "h // 2", "avg_pool2d", [("HPU015", 13)]),
    # measured: one size, 1 graph; two sizes, 2 graphs
    ("[8, 8, 8]", "math.ceil(h / 2)", "max_pool2d", []),
    ("[8, 12]", "math.ceil(h / 2)", "max_pool2d", []),
    # a fixed window: 2 graphs (the size becomes dynamic)
    ("[8, 10, 12, 14, 16]", "2", "max_pool2d", []),
])
def test_pooling_window_from_the_input_size(sides, window, pool, expected):
    assert found(WINDOWS.format(sides=sides, window=window, pool=pool)) == expected


ADAPTIVE = """\
import torch
import torch.nn.functional as F


@torch.compile
def pyramid(x):
    return torch.cat([F.adaptive_max_pool2d(x, n).flatten(1) for n in (1, 2, 4)], 1)


for side in [8, 10, 12, 14, 16]:
    pyramid(torch.randn(1, 2, side, side))
"""
# measured: 2 graphs, 1 recompile


def test_adaptive_pool_over_sizes_stays_quiet():
    assert found(ADAPTIVE) == []


HEAD = """\
import torch
import torch.nn as nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Linear(4, 8)
        self.out = nn.Linear(8, 2)

    def grow(self, k):
        {grow}

    def forward(self, x):
        return self.out(self.body(x))


net = Net()
fast = torch.compile(net)
for stage in range({stages}):
    if stage:
        net.grow(2)
    for _ in range(2):
        fast(torch.randn(3, 4)).sum().backward()
"""


@pytest.mark.parametrize("grow, stages, expected", [
    # measured: 4 stages, 4 graphs, 3 recompiles (the new parameter's size)
    ("self.out = nn.Linear(self.out.in_features, self.out.out_features + k)", 4, [("HPU016", 24)]),
    ("old = self.out\n        new = nn.Linear(8, old.out_features + k)\n        self.out = new", 4, [("HPU016", 26)]),
    # measured: a fresh layer of the same size each stage, 1 graph
    ("self.out = nn.Linear(self.out.in_features, self.out.out_features)", 4, []),
    # two stages: one recompile
    ("self.out = nn.Linear(self.out.in_features, self.out.out_features + k)", 2, []),
])
def test_layer_replaced_by_a_larger_one(grow, stages, expected):
    assert found(HEAD.format(grow=grow, stages=stages)) == expected


DIMS = """\
import torch


@torch.compile
def pool(x, dim):
    return {body}


x = torch.randn(2, 3, 4)
for _ in range(2):
    {calls}
"""


@pytest.mark.parametrize("body, calls, expected", [
    # measured: 3 values, 3 graphs, 2 recompiles (guard at the reduction)
    ("x.sum(dim) / x.shape[0]", "pool(x, dim=1)\n    pool(x, dim=2)\n    pool(x, dim=0)", [("HPU017", 6)]),
    ("x.amax(dim=dim)", "pool(x, 1)\n    pool(x, 2)\n    pool(x, (1, 2))", [("HPU017", 6)]),
    ("torch.cat([x, x], dim)", "pool(x, 0)\n    pool(x, 1)\n    pool(x, -1)", [("HPU017", 6)]),
    # measured: two values, 1 recompile; always the same dim, 1 graph
    ("x.sum(dim)", "pool(x, 1)\n    pool(x, 2)", []),
    ("x.sum(dim)", "pool(x, 1)\n    pool(x, dim=1)\n    pool(x, 1)", []),
    # measured: an int used in arithmetic only, 3 values: 2 graphs (it becomes dynamic)
    ("x * dim", "pool(x, 1)\n    pool(x, 2)\n    pool(x, 3)", []),
])
def test_a_parameter_used_as_a_dimension(body, calls, expected):
    assert found(DIMS.format(body=body, calls=calls)) == expected


GRADS = """\
import random

import torch
import torch.nn as nn


class Stack(nn.Module):
    def __init__(self):
        super().__init__()
        self.blocks = nn.ModuleList(nn.Linear(4, 4) for _ in range(3))
        self.out = nn.Linear(4, 1)

    def forward(self, x):
        for block in self.blocks:
            {skip}
            x = x + block(x)
        return self.out(x)


@torch.compile
def grad_norm(params):
    return torch.stack([p.grad.norm() for p in params if p.grad is not None]).norm()


random.seed(0)
net = Stack()
params = list(net.parameters())
for step in range(8):
    net(torch.randn(2, 4)).sum().backward()
    grad_norm(params)
    net.zero_grad({reset})
"""


@pytest.mark.parametrize("skip, reset, expected", [
    # measured: LayerDrop, 8 steps: 5 graphs, 4 recompiles (guard at the test)
    ("if self.training and random.random() < 0.5:\n                continue", "", [("HPU017", 23)]),
    # measured: every block runs, 1 graph
    ("pass", "", []),
    # measured: gradients kept as zeros, 2 graphs (1 recompile, once the gradients exist)
    ("if self.training and random.random() < 0.5:\n                continue", "set_to_none=False", []),
])
def test_grad_none_test_over_a_randomly_thinned_stack(skip, reset, expected):
    assert found(GRADS.format(skip=skip, reset=reset)) == expected


EXPERTS = """\
import torch
import torch.nn as nn


class Experts(nn.Module):
    def __init__(self):
        super().__init__()
        self.gate = nn.Linear(4, 3)
        self.experts = nn.ModuleList(nn.Linear(4, 4) for _ in range(3))

    def forward(self, x):
        pick = self.gate(x).argmax(-1)
        out = torch.zeros_like(x)
        for e in pick.unique().tolist():
            rows = pick == e
            out[rows] = self.experts[e](x[rows])
        return out


@torch.compile
def total(params):
    s = 0.0
    for p in params:
        if p.grad is None:
            continue
        s = s + p.grad.pow(2).sum()
    return s


torch.manual_seed(0)
moe = Experts()
opt = torch.optim.SGD(moe.parameters(), lr=0.1)
expert_params = [p for e in moe.experts for p in e.parameters()]
for step in range(8):
    moe(torch.randn(2, 4)).sum().backward()
    total(expert_params)
    opt.zero_grad()
"""
# measured: 5 graphs, 4 recompiles (guard at line 24)


def test_grad_none_test_over_experts_picked_by_the_router():
    assert ("HPU017", 24) in found(EXPERTS)
    assert "None" in [m for m in messages(EXPERTS) if "grad" in m][0]
