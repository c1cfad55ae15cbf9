"""The twenty-second held-out set's kinds, statically (no torch): `dir(obj)`, a frame read
(`sys._getframe`), a change of the warnings filters, `str()` of a size that varies, and a generator
given to a compiled function that iterates it (HPU012); a size made a Python constant by
`int.bit_length()`, a NumPy function or a `range()` bound, in a region fed sizes that vary (HPU015).
Each snippet here, bad and look-alike, was measured on torch 2.13 (CPU, `eager` backend,
TORCH_LOGS=graph_breaks,recompiles): the counts are in the comments."""
from __future__ import annotations

import snippets
from snippets import compile_found as found, compile_messages as messages


def quiet(src: str) -> list:
    return snippets.found(src)  # every code: nothing at all


PROBE = """\
import torch
import torch.nn as nn


class Layer(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.proj = nn.Linear(dim, dim)

    def forward(self, x):
        y = self.proj(x)
        if "gate" in dir(self):
            y = y * self.gate(y).sigmoid()
        return y


layers = nn.Sequential(Layer(8), Layer(8))
layers[1].gate = nn.Linear(8, 8)
net = torch.compile(layers)
for _ in range(3):
    net(torch.randn(2, 8))
"""
# measured: a break at line 12 in each layer, 1 recompile ("Dynamo does not know how to trace builtin operator `dir`")

PROBE_HASATTR = PROBE.replace('"gate" in dir(self)', 'hasattr(self, "gate")')
# measured: 1 graph, no break

FRAME_TAG = """\
import sys
import torch

seen = {}


def record(t):
    who = sys._getframe(1).f_code.co_name
    seen[who] = t.detach().abs().max()
    return t


@torch.compile
def encode(x):
    h = record(x.tanh())
    return h * 2


for _ in range(3):
    encode(torch.randn(4, 4))
"""
# measured: a break at line 8, 1 recompile (the dict `seen` gets its key)

FRAME_NAMED = FRAME_TAG.replace("def record(t):\n    who = sys._getframe(1).f_code.co_name\n",
                                "def record(t, who):\n").replace("record(x.tanh())", 'record(x.tanh(), "encode")')
# measured: no break, 1 recompile (the key of `seen`)

QUIET_FILTER = """\
import warnings
import torch
import torch.nn.functional as F


@torch.compile
def resize(x):
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", category=UserWarning)
        y = F.interpolate(x, scale_factor=2.0, mode="nearest")
    return y.relu()


for _ in range(3):
    resize(torch.randn(1, 2, 4, 4))
"""
# measured: a break at line 9 (`warnings.simplefilter("ignore")` in its place too; either one outside a
# `catch_warnings` block breaks too, logged at the line in warnings.py it calls from)

QUIET_BLOCK = QUIET_FILTER.replace('        warnings.filterwarnings("ignore", category=UserWarning)\n', "")
# measured: 1 graph, no break (`catch_warnings()` alone is traced)


def test_dir_of_an_object():
    assert found(PROBE) == [("HPU012", 12)]
    assert "`dir(self)`" in messages(PROBE)[0]
    assert quiet(PROBE_HASATTR) == []


def test_frame_read():
    assert found(FRAME_TAG) == [("HPU012", 8)]
    assert "`sys._getframe()`" in messages(FRAME_TAG)[0]
    assert quiet(FRAME_NAMED) == []


def test_warnings_filter_changed():
    assert found(QUIET_FILTER) == [("HPU012", 9)]
    assert "warnings filters" in messages(QUIET_FILTER)[0]
    simple = QUIET_FILTER.replace('filterwarnings("ignore", category=UserWarning)', 'simplefilter("ignore")')
    assert found(simple) == [("HPU012", 9)]
    assert quiet(QUIET_BLOCK) == []


PENALTY = """\
import torch
import torch.nn as nn


@torch.compile
def l2_penalty(weights, scale):
    total = 0.0
    for w in weights:
        total = total + w.pow(2).sum()
    return scale * total


net = nn.Sequential(nn.Linear(6, 6), nn.ReLU(), nn.Linear(6, 1))
for _ in range(3):
    out = net(torch.randn(4, 6)).mean() + l2_penalty(net.parameters(), 1e-4)
    out.backward()
"""
# measured: a break at line 8 ("Dynamo does not know how to iterate over
# `UserDefinedObjectVariable(generator)`"), no graph: the function runs eagerly

PENALTY_LIST = PENALTY.replace("l2_penalty(net.parameters(), 1e-4)", "l2_penalty(weights, 1e-4)").replace(
    "for _ in range(3):", "weights = list(net.parameters())\nfor _ in range(3):")
# measured: 1 graph, no break

PENALTY_GENEXP = PENALTY.replace("l2_penalty(net.parameters(), 1e-4)",
                                 "l2_penalty((p for p in net.parameters() if p.dim() > 1), 1e-4)")
# measured: a break at line 8, no graph


def test_generator_object_given_to_a_compiled_function():
    assert found(PENALTY) == [("HPU012", 8)]
    assert "a generator object its caller passes" in messages(PENALTY)[0]
    assert quiet(PENALTY_LIST) == []
    assert found(PENALTY_GENEXP) == [("HPU012", 8)]


GRID_KEY = """\
import torch

grids = {}


def grid_for(x):
    key = "-".join(map(str, x.shape[-2:]))
    if key not in grids:
        grids[key] = torch.ones(x.shape[-2:])
    return grids[key]


@torch.compile
def add_grid(x):
    return x.relu() + grid_for(x)


for side in (8, 12, 16, 20, 12):
    add_grid(torch.randn(2, side, side))
"""
# measured: a break at line 7 ("... builtin operator `str` with argument types ['int']"), 5 recompiles
# (the cache keyed by the size: HPU015's size key, at the compiled def)

GRID_ONE_SIZE = GRID_KEY.replace("for side in (8, 12, 16, 20, 12):", "for side in (8, 8, 8):")
# measured: no break, 1 recompile (the size stays static; the cache gets its key)

GRID_COMPREHENSION = GRID_KEY.replace('"-".join(map(str, x.shape[-2:]))',
                                      '"-".join([str(s) for s in x.shape[-2:]])')
# measured: a break at line 7


BUCKET = """\
import torch
import torch.nn.functional as F


def to_bucket(x):
    n = x.shape[-1]
    size = 1 << (n - 1).bit_length()
    return F.pad(x, (0, size - n))


@torch.compile
def encode(x):
    return to_bucket(x).cumsum(-1)


for n in (5, 9, 17, 33, 6, 12):
    encode(torch.randn(2, n))
"""
# measured: no break, 5 recompiles (a guard on the size for `bit_length`)

BUCKET_MULTIPLE = BUCKET.replace("1 << (n - 1).bit_length()", "(n + 7) // 8 * 8")
# measured: 1 recompile (int arithmetic on the size stays symbolic)

NORMALIZED = """\
import numpy as np
import torch


@torch.compile
def mean_per_row(x):
    return x.sum() / np.prod(x.shape[:-1])


for n in (4, 8, 6, 10, 12, 3):
    mean_per_row(torch.randn(n, 5))
"""
# measured: 5 recompiles

NORMALIZED_MATH = NORMALIZED.replace("import numpy as np\n", "import math\n").replace("np.prod", "math.prod")
# measured: 1 recompile

LEVELS = """\
import math
import torch
import torch.nn.functional as F


@torch.compile
def pyramid(x):
    depth = int(math.log2(x.shape[-1])) - 1
    feats = []
    for _ in range(depth):
        feats.append(x.mean((-2, -1)))
        x = F.avg_pool2d(x, 2)
    return torch.stack(feats, -1).sum(-1)


for side in (8, 16, 12, 32, 64, 24):
    pyramid(torch.randn(1, 2, side, side))
"""
# measured: 4 recompiles (the loop unrolled, a guard on the size)

LEVELS_FIXED = LEVELS.replace("int(math.log2(x.shape[-1])) - 1", "3")
# measured: 1 recompile


def test_text_of_a_size_that_changes():
    assert found(GRID_KEY) == [("HPU012", 7), ("HPU015", 13)]
    assert "the text of a size" in messages(GRID_KEY)[0]
    assert quiet(GRID_ONE_SIZE) == []
    assert found(GRID_COMPREHENSION) == [("HPU012", 7), ("HPU015", 13)]


def test_bit_length_of_a_size():
    assert found(BUCKET) == [("HPU015", 7)]
    assert "`int.bit_length()` has no symbolic form" in messages(BUCKET)[0]
    assert quiet(BUCKET_MULTIPLE) == []


def test_numpy_function_of_a_size():
    assert found(NORMALIZED) == [("HPU015", 7)]
    assert "NumPy function" in messages(NORMALIZED)[0]
    assert quiet(NORMALIZED_MATH) == []


def test_loop_bound_from_a_size():
    assert found(LEVELS) == [("HPU015", 10)]
    assert "unrolls a Python loop" in messages(LEVELS)[0]
    assert quiet(LEVELS_FIXED) == []
