"""The seventeenth held-out set's kinds, statically (no torch): `Tensor.apply_`/`map_` and the builtin
`open()` in a compiled region (HPU012); `np.unique`/`nonzero`/`argwhere`/`flatnonzero`/`bincount` and a
one-argument `np.where` there (HPU014); a compiled module whose ModuleList/Sequential/ModuleDict a loop
grows, or whose weights a loop converts to 3 or more dtypes (HPU016); `use_deterministic_algorithms`
(with `warn_only`) or the reduced-precision flags set to 3 or more combinations, a function, module or
dtype argument cycled over 3 or more values, and a TorchFunctionMode that counts into itself entered
around the compiled calls (HPU017). Each case, bad and look-alike, was measured on torch 2.13 (CPU,
`eager` backend, TORCH_LOGS=graph_breaks,recompiles): the counts are in the comments."""
from __future__ import annotations

from textwrap import dedent

import pytest

from hpulint import Config, lint_source

COMPILE = ("HPU012", "HPU013", "HPU014", "HPU015", "HPU016", "HPU017")


def found(src: str) -> list:
    return [(f.code, f.line) for f in lint_source(dedent(src), "t.py", Config()) if f.code in COMPILE]


def messages(src: str) -> list:
    return [f.message for f in lint_source(dedent(src), "t.py", Config()) if f.code in COMPILE]


REGION = """\
import os
import tempfile

import numpy as np
import torch

LOG = os.path.join(tempfile.mkdtemp(), "trace.txt")
REMAP = {{1: 0, 3: 1, 7: 2}}
TABLE = torch.tensor([0, 0, 0, 1, 0, 0, 0, 2])


@torch.compile
def f(x, ids):
    {body}
    return x


for _ in range(3):
    f(torch.randn(4), torch.tensor([1, 3, 7, 3]))
"""


@pytest.mark.parametrize("body, expected", [
    # measured: a graph break at the line (apply_/map_: "marked as skipped"; open: the builtin)
    ("x = x + ids.clone().apply_(REMAP.get).sum()", [("HPU012", 14)]),
    ("x = x + ids.clone().apply_(lambda v: v * 2).sum()", [("HPU012", 14)]),
    ("y = x.clone()\n    y.map_(x, lambda a, b: a + b)\n    x = y", [("HPU012", 15)]),
    ("with open(LOG, 'a') as fh:\n        fh.write('step')", [("HPU012", 14)]),
    ("fh = open(LOG, 'a')\n    fh.close()", [("HPU012", 14)]),
    # measured: a graph break (np.unique 1 graph when the whole function is NumPy, np.nonzero 3 graphs)
    ("classes, counts = np.unique(ids.numpy(), return_counts=True)\n    x = x * len(classes)", [("HPU014", 14)]),
    ("x = x + torch.as_tensor(np.unique(ids)).sum()", [("HPU014", 14)]),
    ("x = x + len(np.nonzero(ids.numpy())[0])", [("HPU014", 14)]),
    ("x = x + torch.from_numpy(np.argwhere(ids.numpy() > 1)).sum()", [("HPU014", 14)]),
    ("(i,) = np.where(ids.numpy() > 1)\n    x = x + torch.from_numpy(i).sum()", [("HPU014", 14)]),
    ("x = x + torch.from_numpy(np.bincount(ids.numpy(), minlength=8)).sum()", [("HPU014", 14)]),
    # traced (measured: one graph): a lookup tensor, np.sort, Module.apply is not Tensor.apply_
    ("x = x + TABLE[ids].sum()", []),
    ("x = x + torch.from_numpy(np.sort(ids.numpy())).sum()", []),
    ("x = x + torch.where(ids > 1, ids, 0).sum()", []),
])
def test_host_calls_in_a_compiled_function(body, expected):
    assert found(REGION.format(body=body)) == expected


def test_open_and_np_unique_outside_the_compiled_function_stay_quiet():
    # measured: one graph (the file written and the classes counted in the eager loop)
    src = """\
    import os
    import tempfile

    import numpy as np
    import torch

    LOG = os.path.join(tempfile.mkdtemp(), "trace.txt")


    @torch.compile
    def f(x, w):
        return (x * w).sum()


    for _ in range(3):
        labels = torch.randint(0, 3, (8,))
        classes, counts = np.unique(labels.numpy(), return_counts=True)
        w = torch.ones(3)
        w[torch.from_numpy(classes)] = 8.0 / torch.from_numpy(counts).float()
        y = f(torch.randn(3), w)
        with open(LOG, "a") as fh:
            fh.write(f"{y.item()}\\n")
    """
    assert found(src) == []


def test_a_local_open_is_not_the_builtin():
    src = """\
    import torch


    def open(path, mode):
        return path


    @torch.compile
    def f(x):
        open("a", "r")
        return x * 2


    for _ in range(3):
        f(torch.randn(4))
    """
    assert found(src) == []


GROW = """\
import torch
import torch.nn as nn


class Grower(nn.Module):
    def __init__(self):
        super().__init__()
        self.stem = nn.Linear(4, 4)
        self.blocks = nn.ModuleList()

    def grow(self):
        self.blocks.append(nn.Linear(4, 4))

    def forward(self, x):
        x = self.stem(x)
        for block in self.blocks:
            x = block(x)
        return x


net = Grower()
{before}
compiled = torch.compile(net)
for stage in {stages}:
    {grow}
    for _ in range(2):
        compiled(torch.randn(2, 4))
"""


@pytest.mark.parametrize("before, stages, grow, expected", [
    # measured: 4 graphs, 3 recompiles ("len(self._modules['blocks']._modules) != 1")
    ("", "range(4)", "net.grow()", [("HPU016", 27)]),
    ("", "range(4)", "if stage > 0:\n        net.grow()", [("HPU016", 28)]),
    ("", "range(3)", "net.blocks.append(nn.Linear(4, 4))", [("HPU016", 27)]),
    ("", "range(3)", "net.blocks.extend([nn.Linear(4, 4)])", [("HPU016", 27)]),
    # measured: grown twice, 2 graphs, 1 recompile; grown before compiling, 1 graph;
    # torch._dynamo.reset() each stage, no recompile
    ("", "range(2)", "net.grow()", []),
    ("for _ in range(3):\n    net.grow()", "range(4)", "pass", []),
    ("", "range(4)", "net.grow()\n    torch._dynamo.reset()", []),
])
def test_a_module_list_grown_between_calls(before, stages, grow, expected):
    assert found(GROW.format(before=before, stages=stages, grow=grow)) == expected


def test_a_module_dict_gaining_a_head_per_task():
    # measured: 3 graphs, 2 recompiles
    src = """\
    import torch
    import torch.nn as nn


    class MultiHead(nn.Module):
        def __init__(self):
            super().__init__()
            self.heads = nn.ModuleDict()

        def add_task(self, name):
            self.heads[name] = nn.Linear(4, 2)

        def forward(self, x):
            return sum(h(x) for h in self.heads.values())


    model = MultiHead()
    compiled = torch.compile(model)
    for task in ["pos", "ner", "chunk"]:
        model.add_task(task)
        compiled(torch.randn(2, 4))
    """
    assert found(src) == [("HPU016", 21)]
    assert "len(self._modules['heads']._modules)" in messages(src)[0]


DTYPES = """\
import torch
import torch.nn as nn


class Head(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(4, 4)

    def forward(self, x):
        return self.lin(x.to(self.lin.weight.dtype)).float()


model = Head(){cast}
compiled = torch.compile(model)
with torch.no_grad():
    for dtype in (torch.float32, torch.bfloat16, torch.float16):
        {body}
        compiled(torch.randn(2, 4))
"""


@pytest.mark.parametrize("cast, body, expected", [
    # measured: 3 graphs, 2 recompiles (the guard is on the weights' dtype)
    ("", "model.to(dtype)", [("HPU016", 19)]),
    ("", "model.to(dtype=dtype)", [("HPU016", 19)]),
    ("", "model.float()\n        compiled(torch.randn(2, 4))\n        model.half()\n        compiled(torch.randn(2, 4))"
         "\n        model.bfloat16()", [("HPU016", 19)]),
    # measured: the dtype set once, 1 graph
    (".to(torch.bfloat16)", "pass", []),
])
def test_weights_converted_to_three_dtypes(cast, body, expected):
    assert found(DTYPES.format(cast=cast, body=body)) == expected


FLAGS = """\
import torch
import torch.nn as nn

model = nn.Linear(4, 4)
compiled = torch.compile(model)
{setup}
for {target} in {items}:
    {body}
    compiled(torch.randn(2, 4))
"""


@pytest.mark.parametrize("setup, target, items, body, expected", [
    # measured: 3 graphs, 2 recompiles ("GLOBAL_STATE changed: deterministic_algorithms", "..._warn_only")
    ("", "mode, warn", "[(False, False), (True, False), (True, True)]",
     "torch.use_deterministic_algorithms(mode, warn_only=warn)", [("HPU017", 9)]),
    ("", "name, kwargs", '[("a", {"mode": False}), ("b", {"mode": True}), ("c", {"mode": True, "warn_only": True})]',
     "torch.use_deterministic_algorithms(**kwargs)", [("HPU017", 9)]),
    ("SETTINGS = [(False, False), (True, False), (True, True)]", "fp16, bf16", "SETTINGS",
     "torch.backends.cuda.matmul.allow_fp16_reduced_precision_reduction = fp16\n    "
     "torch.backends.cuda.matmul.allow_bf16_reduced_precision_reduction = bf16", [("HPU017", 10)]),
    # measured: toggled on and off, 2 graphs; set once, 1 graph; reset before each setting, no recompile
    ("", "step", "range(6)", "torch.use_deterministic_algorithms(step % 2 == 0)", []),
    ("", "mode", "[False, True]", "torch.use_deterministic_algorithms(mode)", []),
    ("torch.use_deterministic_algorithms(True, warn_only=True)", "step", "range(6)", "pass", []),
    ("", "mode, warn", "[(False, False), (True, False), (True, True)]",
     "torch._dynamo.reset()\n    torch.use_deterministic_algorithms(mode, warn_only=warn)", []),
    # the names differ, the settings do not: 2 combinations
    ("", "name, kwargs", '[("a", {"mode": False}), ("b", {"mode": True}), ("c", {"mode": True})]',
     "torch.use_deterministic_algorithms(**kwargs)", []),
])
def test_determinism_and_precision_flags_set_to_three_combinations(setup, target, items, body, expected):
    assert found(FLAGS.format(setup=setup, target=target, items=items, body=body)) == expected


def test_determinism_set_in_a_helper_that_runs_the_compiled_model():
    # the shape of a reproducibility harness: the compiled model is passed to a helper (measured:
    # 3 graphs, 2 recompiles)
    src = """\
    import torch
    import torch.nn as nn


    def run(compiled, x):
        return compiled(x)


    model = nn.Linear(4, 4)
    compiled = torch.compile(model)
    for name, kwargs in [("default", {"mode": False}), ("strict", {"mode": True}),
                         ("warn", {"mode": True, "warn_only": True})]:
        torch.use_deterministic_algorithms(**kwargs)
        run(compiled, torch.randn(2, 4))
    """
    assert found(src) == [("HPU017", 6)]  # at the call whose guard fails, in the helper
    assert "deterministic_algorithms_warn_only" in messages(src)[0]


CYCLED = """\
import torch
import torch.nn as nn
import torch.nn.functional as F


def double(x):
    return x * 2


def shift(x):
    return x - 1


@torch.compile
def step(x, fn):
    return fn(x).sum()


for fn in {items}:
    for _ in range(2):
        step(torch.randn(4), fn)
"""


@pytest.mark.parametrize("items, expected", [
    # measured: 3 graphs, 2 recompiles (a function by identity, a module by type, a dtype by value)
    ("(F.relu, F.gelu, F.silu)", [("HPU017", 21)]),
    ("[double, shift, torch.tanh]", [("HPU017", 21)]),
    ("(nn.ReLU(), nn.GELU(), nn.SiLU())", [("HPU017", 21)]),
    # measured: two functions, 2 graphs, 1 recompile; the same function, 1 graph
    ("(F.relu, F.gelu)", []),
    ("(F.gelu, F.gelu, F.gelu)", []),
])
def test_a_function_argument_cycled(items, expected):
    assert found(CYCLED.format(items=items)) == expected


def test_a_dtype_argument_cycled():
    # measured: 3 graphs, 2 recompiles
    src = """\
    import torch


    @torch.compile
    def f(x, dt):
        return x.to(dt) * 2


    for dt in (torch.float32, torch.float16, torch.bfloat16):
        f(torch.randn(4), dt)
    """
    assert found(src) == [("HPU017", 10)]
    assert "dtype" in messages(src)[0]


MODE = """\
import collections

import torch
import torch.nn as nn
from torch.overrides import TorchFunctionMode


class Recorder(TorchFunctionMode):
    def __init__(self):
        super().__init__()
        self.counts = collections.Counter()
        self.total = 0
        self.calls = []
        self.last = None

    def __torch_function__(self, func, types, args=(), kwargs=None):
        {body}
        return func(*args, **(kwargs or {{}}))


model = nn.Sequential(nn.Linear(8, 16), nn.GELU(), nn.Linear(16, 4))
compiled = torch.compile(model)
rec = Recorder()
for step in range(12):
    with rec:
        out = compiled(torch.randn(4, 8))
"""


@pytest.mark.parametrize("body, expected, key", [
    # measured: 8 graphs, 7 recompiles, an eager fallback (the guard at the line)
    ("self.total += 1", [("HPU017", 17)], False),
    ("self.calls.append(func)", [("HPU017", 17)], False),
    ("self.counts[str(func)] = self.counts.get(str(func), 0) + 1", [("HPU017", 17)], False),
    # measured: also a graph break at the line ("cannot determine the equality comparison")
    ("self.counts[func.__name__] += 1", [("HPU017", 17)], True),
    ('self.counts[getattr(func, "__name__", str(func))] += 1', [("HPU017", 17)], True),
    # measured: 1 graph (a plain store, a stateless mode)
    ("self.last = func.__name__", [], False),
    ("pass", [], False),
])
def test_a_torch_function_mode_counting_into_itself(body, expected, key):
    src = MODE.format(body=body)
    assert found(src) == expected
    if expected:
        assert ("__name__" in messages(src)[0].split("recompile_limit")[1]) == key


def test_a_counting_mode_never_entered_around_a_compiled_call():
    src = MODE.format(body="self.total += 1").replace("with rec:\n        out = compiled", "out = compiled")
    assert found(src) == []
