"""The sixteenth held-out set's kinds, statically (no torch): C builtins of bisect and heapq, DLPack,
checkpoint_sequential, strided nested tensors, cudnn/mkldnn flags as a context manager and a
torch.library operator with no fake implementation in a compiled region (HPU012); a batch of one
among batches of other sizes (HPU015); a compiled module pruned again every pass (HPU016); the
thread count or default dtype a loop sets to 3 or more values around the calls (HPU017). Each kind
was measured on torch 2.13 (the fixtures in fixtures/HPU012, HPU015, HPU016 and HPU017 carry the
counts)."""
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
import bisect
import heapq

import torch
from torch.utils.checkpoint import checkpoint, checkpoint_sequential
from torch.utils.dlpack import from_dlpack, to_dlpack

MILESTONES = [2, 4, 6]
heap = []
seq = torch.nn.Sequential(torch.nn.Linear(4, 4), torch.nn.Linear(4, 4))


{deco}
def f(x, step, xs):
    {body}
    return x


for step in range(4):
    f(torch.randn(2, 4), step, [torch.randn(n, 4) for n in (2, 3)])
"""


@pytest.mark.parametrize("body, expected", [
    # measured: each a graph break at its line
    ("x = x * bisect.bisect_right(MILESTONES, step)", [("HPU012", 15)]),
    ("x = x * bisect.bisect_left(MILESTONES, 3)", [("HPU012", 15)]),
    ("bisect.insort(MILESTONES, 5)", [("HPU012", 15)]),
    ("heapq.heappush(heap, (-x.sum(), step))", [("HPU012", 15)]),
    ("heapq.heappop(heap)", [("HPU012", 15)]),
    ("x = from_dlpack(to_dlpack(x))", [("HPU012", 15)]),
    ("x = torch.from_dlpack(x)", [("HPU012", 15)]),
    # the capsule's frame is not resumed: one break, at the first DLPack call
    ("cap = to_dlpack(x)\n    x = from_dlpack(cap)", [("HPU012", 15)]),
    ("x = checkpoint_sequential(seq, 2, x, use_reentrant=False)", [("HPU012", 15)]),
    ("nt = torch.nested.nested_tensor(xs)\n    x = x + nt.to_padded_tensor(0.0).sum()",
     [("HPU012", 15), ("HPU012", 16)]),
    ("nt = torch.nested.as_nested_tensor(xs)\n    x = x + torch.nested.to_padded_tensor(nt, 0.0).sum()",
     [("HPU012", 15), ("HPU012", 16)]),
    ("with torch.backends.cudnn.flags(enabled=False):\n        x = x.sin()", [("HPU012", 15)]),
    ("with torch.backends.mkldnn.flags(enabled=False):\n        x = x.sin()", [("HPU012", 15)]),
    # traced: counting in Python, a jagged nested tensor, checkpoint per block, sdpa_kernel
    ("x = x * sum(step >= m for m in MILESTONES)", []),
    ("nt = torch.nested.nested_tensor(xs, layout=torch.jagged)\n    x = x + nt.to_padded_tensor(0.0).sum()", []),
    ("x = checkpoint(seq, x, use_reentrant=False)", []),
    ("with torch.nn.attention.sdpa_kernel(torch.nn.attention.SDPBackend.MATH):\n        x = x.sin()", []),
])
def test_untraced_calls_in_a_compiled_function(body, expected):
    assert found(REGION.format(deco="@torch.compile", body=body)) == expected


@pytest.mark.parametrize("body", [
    "x = x * bisect.bisect_right(MILESTONES, step)",
    "heapq.heappush(heap, (-x.sum(), step))",
    "x = from_dlpack(to_dlpack(x))",
    "x = checkpoint_sequential(seq, 2, x, use_reentrant=False)",
    "nt = torch.nested.nested_tensor(xs)",
    "with torch.backends.cudnn.flags(enabled=False):\n        x = x.sin()",
])
def test_untraced_calls_in_eager_code(body):
    assert found(REGION.format(deco="", body=body)) == []


def test_bisect_in_a_method_the_compiled_function_calls():
    src = """\
    import bisect

    import torch


    class Schedule:
        def __init__(self, milestones):
            self.milestones = milestones

        def at(self, step):
            return 0.5 ** bisect.bisect_right(self.milestones, step)


    sched = Schedule([3, 6])


    @torch.compile
    def loss_fn(x, step):
        return x.sum() * sched.at(step)


    for step in range(8):
        loss_fn(torch.randn(4), step)
    """
    assert found(src) == [("HPU012", 11)]
    assert "Dynamo does not trace `bisect.bisect_right()` (a C builtin" in messages(src)[0]


OPS = """\
import torch

lib = torch.library.Library("myops", "DEF")
lib.define("clip3(Tensor x) -> Tensor")
lib.impl("clip3", lambda x: x.clamp(-3, 3), "{key}")
{fake}


@torch.compile
def f(x):
    return torch.ops.myops.clip3(x) + 1


for _ in range(3):
    f(torch.randn(4))
"""


@pytest.mark.parametrize("key, fake, expected", [
    ("CPU", "", [("HPU012", 11)]),  # measured: 2 graphs, 1 break
    ("HPU", "", [("HPU012", 11)]),
    ("CPU", "lib.impl(\"clip3\", lambda x: torch.empty_like(x), \"Meta\")", []),  # measured: 1 graph
    ("CPU", "torch.library.register_fake(\"myops::clip3\")(lambda x: torch.empty_like(x))", []),
    ("CompositeImplicitAutograd", "", []),  # measured: 1 graph
    ("CPU", "torch.library.register_fake(name)(lambda x: x)", []),  # a name not written out: trusted
])
def test_library_operator_without_a_fake(key, fake, expected):
    assert found(OPS.format(key=key, fake=fake)) == expected


def test_library_operator_defined_elsewhere_is_not_reported():
    src = """\
    import torch


    @torch.compile
    def f(x):
        return torch.ops.aten.relu(x) + torch.ops.other.op(x)


    for _ in range(3):
        f(torch.randn(4))
    """
    assert found(src) == []


BATCHES = """\
import torch

model = torch.compile(torch.nn.Linear(12, 3){kw})


def drain(sizes):
    for n in sizes:
        yield torch.randn(n, 12)


{loop}
"""


@pytest.mark.parametrize("loop, kw, expected", [
    # measured: 3 graphs, 2 recompiles (the first size static, the second dynamic, 1 on its own)
    ("for x in drain([8, 5, 1, 3, 1, 7, 6]):\n    model(x)", "", [("HPU015", 12)]),
    ("for n in [8, 5, 1]:\n    model(torch.randn(n, 12))", "", [("HPU015", 12)]),
    ("for n in (8, 1, 5):\n    x = torch.randn(n, 12)\n    model(x)", "", [("HPU015", 13)]),
    ("for n in [8, 0, 5]:\n    model(torch.randn(n, 12))", "", [("HPU015", 12)]),
    # measured: 2 graphs (no 1; the 1 first; only one other size; dynamic=True)
    ("for n in [8, 5, 3, 7]:\n    model(torch.randn(n, 12))", "", []),
    ("for n in [1, 8, 5]:\n    model(torch.randn(n, 12))", "", []),
    ("for n in [8, 1, 8, 1]:\n    model(torch.randn(n, 12))", "", []),
    ("for n in [8, 5, 1, 3]:\n    model(torch.randn(n, 12))", ", dynamic=True", []),
    # the sizes not known
    ("for n in sizes:\n    model(torch.randn(n, 12))", "", []),
])
def test_batch_of_one_among_other_sizes(loop, kw, expected):
    src = BATCHES.format(loop=loop, kw=kw)
    if "sizes:" in loop:
        src = src.replace("def drain", "sizes = load()\n\n\ndef drain")
        expected = []
    assert found(src) == expected


def test_batch_of_one_message():
    msg = messages(BATCHES.format(loop="for x in drain([8, 5, 1, 3, 1, 7, 6]):\n    model(x)", kw=""))[0]
    assert msg.startswith("`model` is called in a loop with a dimension of sizes 8, 5, 1, 3, 1, 7, 6 "
                          "(`drain([8, 5, 1, 3, 1, 7, 6])`)")
    assert "3 graphs, 2 recompiles" in msg


PRUNE = """\
import torch
import torch.nn as nn
import torch.nn.utils.prune as prune

net = nn.Sequential(nn.Linear(8, 8), nn.ReLU(), nn.Linear(8, 2))
compiled = torch.compile(net)


def prune_round(model):
    for layer in (model[0], model[2]):
        {prune}


for round_ in {rounds}:
    compiled(torch.randn(4, 8)).sum().backward()
    prune_round(net)
"""


@pytest.mark.parametrize("prune, rounds, expected", [
    # measured: 3 graphs, 2 recompiles (5 rounds)
    ('prune.l1_unstructured(layer, name="weight", amount=0.2)', "range(5)", [("HPU016", 15)]),
    ('prune.random_unstructured(layer, "weight", 0.2)', "range(3)", [("HPU016", 15)]),
    ('prune.l1_unstructured(layer, name="weight", amount=0.2)', "range(rounds)", [("HPU016", 15)]),
    # made permanent each round (measured: 1 graph), or two rounds (1 recompile)
    ('prune.l1_unstructured(layer, name="weight", amount=0.2)\n        prune.remove(layer, "weight")',
     "range(5)", []),
    ('prune.l1_unstructured(layer, name="weight", amount=0.2)', "range(2)", []),
    # not a pruning function
    ("layer.weight.data.mul_(0.9)", "range(5)", []),
])
def test_compiled_module_pruned_every_pass(prune, rounds, expected):
    src = PRUNE.format(prune=prune, rounds=rounds)
    if "rounds)" in rounds:
        src = src.replace("compiled = ", "rounds = int(input())\ncompiled = ")
        expected = [(c, ln + 1) for c, ln in expected]
    assert found(src) == expected


def test_module_pruned_once_before_compiling():
    src = """\
    import torch
    import torch.nn as nn
    import torch.nn.utils.prune as prune

    net = nn.Sequential(nn.Linear(8, 8), nn.ReLU(), nn.Linear(8, 2))
    prune.l1_unstructured(net[0], name="weight", amount=0.5)
    compiled = torch.compile(net)
    for step in range(5):
        compiled(torch.randn(4, 8)).sum().backward()
    """
    assert found(src) == []


THREADS = """\
import torch

model = torch.compile(torch.nn.Linear(8, 8))
x = torch.randn(4, 8)


def use(n):
    {setter}(n)


for n in {values}:
    {call}
    model(x)
"""


@pytest.mark.parametrize("setter, values, call, expected", [
    # measured: 3 graphs, 2 recompiles ("GLOBAL_STATE changed: num_threads")
    ("torch.set_num_threads", "(1, 2, 4)", "torch.set_num_threads(n)", [("HPU017", 13)]),
    ("torch.set_num_threads", "(1, 2, 4)", "use(n)", [("HPU017", 13)]),
    ("torch.set_num_threads", "range(1, 5)", "use(n)", [("HPU017", 13)]),  # measured: 4 graphs
    ("torch.set_default_dtype", "(torch.float32, torch.float64, torch.float16)", "use(n)", [("HPU017", 13)]),
    # two values (measured: 2 graphs), the same value, the values not known
    ("torch.set_num_threads", "(1, 2, 1, 2)", "use(n)", []),
    ("torch.set_num_threads", "(1, 2, 4)", "torch.set_num_threads(2)", []),
    ("torch.set_num_threads", "counts", "use(n)", []),
    # a setting the guard does not keep
    ("print", "(1, 2, 4)", "use(n)", []),
])
def test_global_state_set_per_pass(setter, values, call, expected):
    src = THREADS.format(setter=setter, values=values, call=call)
    if values == "counts":
        src = src.replace("x = torch", "counts = load()\nx = torch")
    assert found(src) == expected


def test_global_state_message():
    msg = messages(THREADS.format(setter="torch.set_num_threads", values="(1, 2, 4)", call="use(n)"))[0]
    assert msg.startswith("`model` is called in `for n in (1, 2, 4)`, which sets `torch.set_num_threads(n)` "
                          "(in use()) to 3 different values")
    assert "GLOBAL_STATE changed: num_threads" in msg and "3 graphs, 2 recompiles" in msg
