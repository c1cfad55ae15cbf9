"""The eleventh held-out set's graph-break kinds, statically (no torch): code Dynamo traces although
no call of the compiled region names it (a property a compiled method reads, a forward hook on a
compiled module, a function called through a table, a `functools.partial` of `torch.compile`), and a
`@contextmanager` whose later lines Dynamo never traces. Each kind was measured on torch 2.13
(fixtures in fixtures/HPU012 and HPU014 carry the counts)."""
from __future__ import annotations

from textwrap import dedent

import pytest

from hpulint import Config, lint_source

COMPILE = ("HPU012", "HPU013", "HPU014", "HPU015", "HPU016", "HPU017")


def found(src: str) -> list:
    return [(f.code, f.line) for f in lint_source(dedent(src), "t.py", Config()) if f.code in COMPILE]


def messages(src: str, code: str) -> list:
    return [f.message for f in lint_source(dedent(src), "t.py", Config()) if f.code == code]


PROPERTY = """\
import torch
import torch.nn as nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(8, 8)
        self.log_scale = nn.Parameter(torch.tensor(1.0))

    @property
    def scale(self):
        return {getter}

    def forward(self, x):
        return self.lin(x) * {use}


net = Net()
model = torch.compile(net)
for _ in range(3):
    model(torch.randn(4, 8)).sum().backward()
    print(net.scale)
"""


@pytest.mark.parametrize("getter, use, expected", [
    ("self.log_scale.exp().item()", "self.scale", [("HPU012", 13)]),
    ("min(self.log_scale.exp().item(), 100.0)", "self.scale", [("HPU012", 13)]),
    ("float(self.log_scale.exp())", "self.scale", [("HPU012", 13)]),
    ("self.log_scale.exp().clamp(max=100.0)", "self.scale", []),  # stays on the device: traced
    ("self.log_scale.exp().item()", "self.log_scale", []),  # read only by the eager print
])
def test_a_property_the_compiled_forward_reads(getter, use, expected):
    assert found(PROPERTY.format(getter=getter, use=use)) == expected


def test_property_message_says_who_reads_it():
    (msg,) = messages(PROPERTY.format(getter="self.log_scale.exp().item()", use="self.scale"), "HPU012")
    assert "in scale(), a property the compiled Net.forward() reads as `self.scale`" in msg


HOOK = """\
import torch
import torch.nn as nn

stats = {{}}


def watch(name):
    def hook(module, inputs, output):
        {line}
    return hook


def count(module, inputs, output):
    {line}


model = nn.Sequential(nn.Linear(8, 8), nn.ReLU(), nn.Linear(8, 2))
{register}
compiled = torch.compile(model)
for _ in range(3):
    compiled(torch.randn(4, 8)).sum().backward()
"""
READ = 'stats["dead"] = int((output <= 0).sum())'
KEEP = 'stats["dead"] = (output <= 0).sum()'


@pytest.mark.parametrize("line, register, expected", [
    (READ, "model[1].register_forward_hook(count)", [("HPU012", 14)]),
    (READ, "model.register_forward_hook(count)", [("HPU012", 14)]),  # the compiled module's own hook
    (READ, 'for name, m in model.named_modules():\n    m.register_forward_hook(watch(name))', [("HPU012", 9)]),
    (READ, "for i, m in enumerate(model):\n    m.register_forward_hook(watch(str(i)))", [("HPU012", 9)]),
    (READ, "model[1].register_forward_pre_hook(lambda m, inputs: stats.update(n=float(inputs[0].sum())))",
     [("HPU012", 18)]),
    (KEEP, "model[1].register_forward_hook(count)", []),  # the count stays a tensor
    (READ, "other = nn.ReLU()\nother.register_forward_hook(count)", []),  # a module that runs eagerly
])
def test_a_forward_hook_on_a_compiled_module(line, register, expected):
    assert found(HOOK.format(line=line, register=register)) == expected


def test_hook_message_names_the_module_and_the_compiled_model():
    (msg,) = messages(HOOK.format(line=READ, register="model[1].register_forward_hook(count)"), "HPU012")
    assert "in count(), a forward hook on `model[1]`, a module the compiled `model` runs" in msg


HOOK_IN_INIT = """\
import torch
import torch.nn as nn

norms = {{}}


def log_norm(t):
    norms["in"] = t.norm().item()


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(8, 8)
        self.out = nn.Linear(8, 2)
        self.out.register_forward_pre_hook(self._log_input)

    def _log_input(self, module, inputs):
        log_norm(inputs[0])

    def forward(self, x):
        return self.out(self.lin(x).relu())


{compiled}
for _ in range(3):
    model(torch.randn(4, 8)).sum().backward()
"""


@pytest.mark.parametrize("compiled, expected", [
    ("model = torch.compile(Net())", [("HPU012", 8)]),  # the helper the hook calls
    ("model = Net()", []),
])
def test_a_bound_method_hook_registered_in_init_and_its_helper(compiled, expected):
    assert found(HOOK_IN_INIT.format(compiled=compiled)) == expected


TABLE = """\
import torch
import torch.nn.functional as F


def token_loss(logits, labels, valid):
    return F.cross_entropy(logits[valid], labels[valid])


def scaled(t):
    return t * float(t.std())


LOSSES = {{"token": token_loss, "first": lambda logits, labels, valid: F.cross_entropy(logits[:, 0], labels[:, 0])}}
ACTS = [lambda t: t.relu(), scaled]


@torch.compile
def step(logits, labels, task, act):
    {body}


for _ in range(3):
    labels = torch.randint(0, 5, (4, 12))
    step(torch.randn(4, 12, 5), labels, "token", 1)
"""


@pytest.mark.parametrize("body, expected", [
    ("return LOSSES[task](logits, labels, labels >= 0)", [("HPU014", 6), ("HPU014", 6)]),
    ("return LOSSES.get(task)(logits, labels, labels >= 0)", [("HPU014", 6), ("HPU014", 6)]),
    ("loss_fn = LOSSES[task]\n    return loss_fn(logits, labels, labels >= 0)", [("HPU014", 6), ("HPU014", 6)]),
    ("return ACTS[act](logits).sum()", [("HPU012", 10)]),
    ("return F.cross_entropy(logits[:, 0], labels[:, 0])", []),  # the table is not used there
])
def test_a_function_called_through_a_table(body, expected):
    assert found(TABLE.format(body=body)) == expected


def test_a_table_called_in_eager_code_is_quiet():
    src = TABLE.format(body="return logits.sum()") + "LOSSES['token'](torch.randn(4, 12, 5), labels, labels >= 0)\n"
    assert found(src) == []


def test_table_message_names_the_table_and_the_call():
    (msg, _) = messages(TABLE.format(body="return LOSSES[task](logits, labels, labels >= 0)"), "HPU014")
    assert "in token_loss(), kept in `LOSSES` and called through it in the compiled step() (`LOSSES[task](...)`)" \
        in msg


PARTIAL = """\
import functools

import torch

compile_static = functools.partial(torch.compile, {kw})


@compile_static
def features(x):
    return x.relu().sum() * {scale}


for n in range(4, 40, 3):
    features(torch.randn(2, n))
"""


@pytest.mark.parametrize("kw, scale, expected", [
    ("dynamic=False", "2", [("HPU015", 8)]),  # at the decorator: the partial may serve several functions
    ("dynamic=False", "x.std().item()", [("HPU015", 8), ("HPU012", 10)]),
    ("mode='max-autotune'", "x.std().item()", [("HPU012", 10)]),  # a compiled region all the same
    ("mode='max-autotune'", "2", []),  # sizes made dynamic after one recompile
])
def test_a_partial_of_torch_compile_as_a_decorator(kw, scale, expected):
    assert found(PARTIAL.format(kw=kw, scale=scale)) == expected


def test_a_partial_of_torch_compile_called_on_a_function():
    src = PARTIAL.format(kw="dynamic=False", scale="2").replace("@compile_static\n", "").replace(
        "for n in", "features = compile_static(features)\nfor n in")
    assert found(src) == [("HPU015", 12)]
    (msg,) = messages(src, "HPU015")
    assert msg.startswith("`compile_static` is `functools.partial(torch.compile, dynamic=False)`, and `dynamic=False`")


def test_a_partial_of_torch_compile_is_not_lazy_mode_code():
    assert [f.code for f in lint_source(dedent(PARTIAL.format(kw="dynamic=False", scale="2")), "t.py", Config())] \
        == ["HPU015"]


CONTEXT = """\
import contextlib
import time

import torch

log = {{}}


@contextlib.contextmanager
def timed(x):
    {before}
    yield
    {after}


@torch.compile
def step(x):
    with timed(x):
        x = x * 2
    return x


for _ in range(3):
    step(torch.randn(4))
"""


@pytest.mark.parametrize("before, after, expected", [
    ("start = time.perf_counter()", 'log["t"] = time.perf_counter() - start', [("HPU012", 11)]),
    ('log["max"] = x.abs().max().item()', 'print("done")', [("HPU012", 11)]),
    ("pass", 'log["t"] = time.perf_counter()\n    print("done")', [("HPU012", 13)]),
])
def test_only_the_first_break_of_a_context_manager(before, after, expected):
    assert found(CONTEXT.format(before=before, after=after)) == expected


def test_context_manager_message_says_the_function_runs_eagerly():
    (msg,) = messages(CONTEXT.format(before="start = time.perf_counter()", after='log["t"] = start'), "HPU012")
    assert "in a `with` block's context manager Dynamo does not resume: the function that runs the `with` runs " \
           "eagerly (no graph of its own)" in msg


def test_a_plain_helper_breaks_at_each_read():
    # measured: a helper (not a context manager) with tensor work between two clock reads breaks at both
    src = """\
import time

import torch

log = {}


def tick(x):
    start = time.perf_counter()
    x = x * 2
    log["t"] = time.perf_counter() - start
    return x


@torch.compile
def step(x):
    return tick(x).relu()


for _ in range(3):
    step(torch.randn(4))
"""
    assert found(src) == [("HPU012", 9), ("HPU012", 11)]
