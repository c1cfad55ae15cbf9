"""The twenty-first held-out set's kinds, statically (no torch): `send()` on a generator made outside
the compiled function, `eval`/`exec` given a namespace, `str()`/`repr()`/`"..." % t` of a tensor, a
`cmath` call, a `__torch_dispatch__` wrapper subclass that is not traceable, a Python number on the
left of `-`/`/`/`**` with a plain Tensor subclass on the right, and a `raise` caught outside the region
(HPU012); a batch whose class its collate function declares on every call (HPU017); and a step
compiled through `compile_step = torch_xla.compile`, which keeps the lazy-mode HPU004 quiet. Each
snippet here, bad and look-alike, was measured on torch 2.13 (CPU, `eager` backend,
TORCH_LOGS=graph_breaks,recompiles): the counts are in the comments."""
from __future__ import annotations

import snippets
from snippets import compile_found as found, compile_messages as messages


def quiet(src: str) -> list:
    return snippets.found(src)  # every code: nothing at all


COROUTINE = """\
import torch


def running_mean():
    total, n, mean = 0.0, 0, None
    while True:
        v = yield mean
        total += v
        n += 1
        mean = total / n


tracker = running_mean()
next(tracker)


@torch.compile
def step(x):
    y = x.cos().sum()
    m = tracker.send(y)
    return y * 2, m


for _ in range(3):
    step(torch.randn(4))
"""
# measured: 2 graphs, a break at line 20 ("call_method on generator")

COROUTINE_LOCAL = COROUTINE.replace("tracker = running_mean()\nnext(tracker)\n", "").replace(
    "    y = x.cos().sum()\n", "    tracker = running_mean()\n    next(tracker)\n    y = x.cos().sum()\n")
# measured: 1 graph, no break (the generator is made in the compiled function)

COROUTINE_ATTR = """\
import torch
import torch.nn as nn


def running_mean():
    total, n, mean = 0.0, 0, None
    while True:
        v = yield mean
        total, n = total + v, n + 1
        mean = total / n


class Head(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)
        self.meter = running_mean()
        next(self.meter)

    def forward(self, x):
        y = self.fc(x).sum()
        self.meter.send(y.detach())
        return y


head = torch.compile(Head())
for _ in range(3):
    head(torch.randn(2, 4))
"""
# measured: a break at line 22

EVAL_TERMS = """\
import torch

RULE = "a + 0.5 * b"


@torch.compile
def total(x):
    a = x.sin().sum()
    b = x.cos().sum()
    return eval(RULE, {}, {"a": a, "b": b})


for _ in range(3):
    total(torch.randn(4))
"""
# measured: a break at line 10 ("Dynamo does not know how to trace builtin operator `eval`")

EVAL_ONCE = EVAL_TERMS.replace('RULE = "a + 0.5 * b"', 'combine = eval("lambda a, b: a + 0.5 * b")').replace(
    'eval(RULE, {}, {"a": a, "b": b})', "combine(a, b)")
# measured: 1 graph, no break (the function is made in the eager code)

EVAL_CONSTANT = EVAL_TERMS.replace('eval(RULE, {}, {"a": a, "b": b})', 'a * eval("2 * 3")')
# measured: 1 graph, no break (eval of a constant string alone is folded)

TEXT_OF_LOSS = """\
import torch


class Banner:
    text = ""


banner = Banner()


@torch.compile
def evaluate(x):
    loss = x.sin().mean()
    banner.text = "loss " + str(loss)
    return loss * 2


for _ in range(3):
    evaluate(torch.randn(4))
"""
# measured: a break at line 14 (repr(loss) and "%s" % loss too)

TEXT_OF_SHAPE = TEXT_OF_LOSS.replace('"loss " + str(loss)', '"shape " + str(x.shape)')
# measured: 1 graph, no break
PERCENT_OF_LOSS = TEXT_OF_LOSS.replace('"loss " + str(loss)', '"loss %s" % loss')
PERCENT_OF_COUNT = TEXT_OF_LOSS.replace('"loss " + str(loss)', '"rows %d" % x.shape[0]')
# measured: a break at line 14; 1 graph, no break

PHASE = """\
import cmath
import random
import torch


@torch.compile
def rotate(x, phi):
    y = x.sin()
    r = cmath.exp(1j * phi)
    return (y * r).abs().sum()


for _ in range(4):
    rotate(torch.randn(4, dtype=torch.complex64), random.uniform(0, 6.28))
"""
# measured: 2 breaks at line 9, 1 recompile (phi); cmath.exp(1j * 0.3) of a constant breaks too

PHASE_TORCH = PHASE.replace("cmath.exp(1j * phi)", "torch.exp(1j * phi)").replace(
    "random.uniform(0, 6.28))", "torch.tensor(random.uniform(0, 6.28)))")
# measured: 1 graph, no break

WRAPPER = """\
import torch
import torch.nn as nn


class Packed(torch.Tensor):
    @staticmethod
    def __new__(cls, data, scale):
        return torch.Tensor._make_wrapper_subclass(cls, data.shape, dtype=data.dtype)

    def __init__(self, data, scale):
        self.payload, self.scale = data, scale

    @classmethod
    def __torch_dispatch__(cls, func, types, args=(), kwargs=None):
        un = lambda a: a.payload * a.scale if isinstance(a, Packed) else a
        return func(*[un(a) for a in args], **{k: un(v) for k, v in (kwargs or {}).items()})


class Mix(nn.Module):
    def __init__(self):
        super().__init__()
        self.w = Packed(torch.randn(4, 4), 0.5)

    def forward(self, x):
        h = x.relu()
        return h @ self.w


m = torch.compile(Mix())
with torch.no_grad():
    for _ in range(3):
        m(torch.randn(2, 4))
"""
# measured: a break at line 26

WRAPPER_TRACEABLE = WRAPPER.replace("""    @classmethod
    def __torch_dispatch__""", """    def __tensor_flatten__(self):
        return ["payload"], self.scale

    @staticmethod
    def __tensor_unflatten__(inner, scale, outer_size, outer_stride):
        return Packed(inner["payload"], scale)

    @classmethod
    def __torch_dispatch__""")
# measured: 1 graph, no break

WRAPPER_ARGUMENT = WRAPPER.split("class Mix")[0] + """\
@torch.compile
def mix(x, w):
    h = x.relu()
    return h @ w


w = Packed(torch.randn(4, 4), 0.5)
with torch.no_grad():
    for _ in range(3):
        mix(torch.randn(2, 4), w)
"""
# measured: a break at line 22

MARKED = """\
import torch


class Marked(torch.Tensor):
    pass


@torch.compile
def score(x, t):
    y = x.sin()
    r = 1 - (t * x)
    return r.sum() + y.sum()


for _ in range(3):
    score(torch.rand(4) + 1, (torch.rand(4) + 1).as_subclass(Marked))
"""
# measured: a break at line 11 ("All __torch_function__ overrides returned NotImplemented"); `2 / t`,
# `2 ** t`, `1 - t.sum()` too

MARKED_LEFT = MARKED.replace("1 - (t * x)", "-(t * x) + 1")
MARKED_PLAIN = MARKED.replace("(torch.rand(4) + 1).as_subclass(Marked)", "torch.rand(4) + 1")
# measured: 1 graph, no break (`t - 1`, `2 * t`, `x - t`, `torch.sub(1, t)` neither)

STOP_HOOK = """\
import torch
import torch.nn as nn


class Halt(Exception):
    pass


kept = {}


def grab(module, args, out):
    kept["h"] = out
    raise Halt


net = nn.Sequential(nn.Linear(4, 4), nn.ReLU(), nn.Linear(4, 4), nn.ReLU())
net[1].register_forward_hook(grab)
cnet = torch.compile(net)
for _ in range(3):
    try:
        cnet(torch.randn(2, 4))
    except Halt:
        pass
"""
# measured: 2 breaks at line 14 (the hook runs in the graph and in its resume)

STOP_CAUGHT_INSIDE = """\
import torch


class Halt(Exception):
    pass


def inner(x):
    raise Halt


@torch.compile
def f(x):
    y = x.sin()
    try:
        inner(y)
    except Halt:
        pass
    return y * 2


for _ in range(3):
    f(torch.randn(4))
"""
# measured: 1 graph, no break

SHAPE_CHECK = """\
import torch


@torch.compile
def f(x):
    if x.dim() != 2:
        raise ValueError("want a matrix")
    return x.sin() * 2


for _ in range(3):
    try:
        f(torch.randn(4, 3))
    except ValueError:
        pass
"""
# measured: 1 graph, no break (the raise is not reached)

LOCAL_NAMEDTUPLE = """\
from collections import namedtuple
import torch


def pack(x, y):
    Pair = namedtuple("Pair", "x y")
    return Pair(x, y)


@torch.compile
def f(batch):
    return (batch.x * batch.y).sum()


for _ in range(12):
    f(pack(torch.randn(4), torch.randn(4)))
"""
# measured: 8 graphs, 7 recompiles, then the recompile limit and an eager fallback

MODULE_NAMEDTUPLE = LOCAL_NAMEDTUPLE.replace('    Pair = namedtuple("Pair", "x y")\n', "").replace(
    "import torch\n", 'import torch\n\nPair = namedtuple("Pair", "x y")\n')
# measured: 1 graph
FIELDS_PASSED = LOCAL_NAMEDTUPLE.replace("def f(batch):\n    return (batch.x * batch.y).sum()",
                                         "def f(x, y):\n    return (x * y).sum()").replace(
    "    f(pack(torch.randn(4), torch.randn(4)))", "    b = pack(torch.randn(4), torch.randn(4))\n    f(b.x, b.y)")
# measured: 1 graph

LOCAL_CLASS = """\
import torch


def pack(x, y):
    class Pair:
        def __init__(self, x, y):
            self.x, self.y = x, y
    return Pair(x, y)


@torch.compile
def f(batch):
    x, y = batch.x, batch.y
    return (x * y).sum()


for _ in range(12):
    batch = pack(torch.randn(4), torch.randn(4))
    f(batch)
"""
# measured: 8 graphs, 7 recompiles, an eager fallback

XLA_ALIAS = """\
import torch
import torch.nn as nn

try:
    import torch_xla
    device = torch_xla.device()
    compile_step = torch_xla.compile
except ImportError:
    torch_xla, device = None, torch.device("cpu")
    compile_step = lambda f: torch.compile(f, backend="eager")

model = nn.Linear(8, 2).to(device)
opt = torch.optim.SGD(model.parameters(), lr=0.1)


def loss_fn(x, y):
    return nn.functional.cross_entropy(model(x), y)


step_fn = compile_step(loss_fn)
for _ in range(4):
    loss = step_fn(torch.randn(4, 8, device=device), torch.randint(0, 2, (4,), device=device))
    loss.backward()
    opt.step()
    opt.zero_grad()
"""
# measured (torch_xla.compile standing in as torch.compile): 1 graph


def test_send_into_a_generator_made_outside():
    assert found(COROUTINE) == [("HPU012", 20)]
    assert "call_method on generator" in messages(COROUTINE)[0]
    assert quiet(COROUTINE_LOCAL) == []
    assert found(COROUTINE_ATTR) == [("HPU012", 22)]


def test_eval_with_a_namespace():
    assert found(EVAL_TERMS) == [("HPU012", 10)]
    assert "`eval()` given a namespace" in messages(EVAL_TERMS)[0]
    assert quiet(EVAL_ONCE) == []
    assert quiet(EVAL_CONSTANT) == []


def test_text_of_a_tensor():
    assert found(TEXT_OF_LOSS) == [("HPU012", 14)]
    assert "text of a tensor is its value" in messages(TEXT_OF_LOSS)[0]
    assert found(TEXT_OF_LOSS.replace("str(loss)", "repr(loss)")) == [("HPU012", 14)]
    assert quiet(TEXT_OF_SHAPE) == []
    assert found(PERCENT_OF_LOSS) == [("HPU012", 14)]
    assert quiet(PERCENT_OF_COUNT) == []


def test_cmath_call():
    assert found(PHASE) == [("HPU012", 9)]
    assert "`cmath` module" in messages(PHASE)[0]
    assert found(PHASE.replace("cmath.exp(1j * phi)", "cmath.exp(1j * 0.3)")) == [("HPU012", 9)]
    assert quiet(PHASE_TORCH) == []


def test_wrapper_subclass_not_traceable():
    assert found(WRAPPER) == [("HPU012", 26)]
    assert "`__torch_dispatch__` but no `__tensor_flatten__`" in messages(WRAPPER)[0]
    assert quiet(WRAPPER_TRACEABLE) == []
    assert found(WRAPPER_ARGUMENT) == [("HPU012", 22)]


def test_number_left_of_a_plain_subclass():
    assert found(MARKED) == [("HPU012", 11)]
    assert "`-` with a `Marked` on its right" in messages(MARKED)[0]
    for op in ("2 / t", "2 ** t", "1 - t.sum()"):
        assert found(MARKED.replace("1 - (t * x)", op)) == [("HPU012", 11)], op
    assert quiet(MARKED_LEFT) == []
    assert quiet(MARKED_PLAIN) == []
    for op in ("t - 1", "2 * t", "x - t", "torch.sub(1, t)", "1 - t.shape[0]"):
        assert quiet(MARKED.replace("1 - (t * x)", op)) == [], op


def test_raise_caught_outside_the_region():
    assert found(STOP_HOOK) == [("HPU012", 14)]
    assert "`Halt` is raised on every call" in messages(STOP_HOOK)[0]
    assert quiet(STOP_CAUGHT_INSIDE) == []
    assert quiet(SHAPE_CHECK) == []


def test_batch_class_declared_by_every_call():
    assert found(LOCAL_NAMEDTUPLE) == [("HPU017", 16)]
    assert "declares the class `Pair` in its body" in messages(LOCAL_NAMEDTUPLE)[0]
    assert quiet(MODULE_NAMEDTUPLE) == []
    assert quiet(FIELDS_PASSED) == []
    assert found(LOCAL_CLASS) == [("HPU017", 19)]


def test_step_compiled_through_an_alias_of_torch_xla_compile():
    assert quiet(XLA_ALIAS) == []  # no lazy-mode HPU004: the step is compiled
    assert snippets.found(XLA_ALIAS.replace("step_fn = compile_step(loss_fn)", "step_fn = loss_fn"),
                          ("HPU004",)) != []  # uncompiled, the XLA loop still lacks its step marker
