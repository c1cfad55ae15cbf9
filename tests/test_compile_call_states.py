"""The thirteenth held-out set's recompile kinds, statically (no torch): the autocast state around the
calls of one compiled callable, combinations of bool flags, nested tuples of different structures, a
functools.partial whose float keyword changes, and inputs of several memory layouts. Each kind was
measured on torch 2.13 (fixtures in fixtures/HPU015 and HPU017 carry the counts)."""
from __future__ import annotations

from textwrap import dedent

import pytest

from hpulint import Config, lint_source

COMPILE = ("HPU012", "HPU013", "HPU014", "HPU015", "HPU016", "HPU017")


def found(src: str) -> list:
    return [(f.code, f.line) for f in lint_source(dedent(src), "t.py", Config()) if f.code in COMPILE]


def messages(src: str) -> list:
    return [f.message for f in lint_source(dedent(src), "t.py", Config()) if f.code in COMPILE]


MODULE = """\
import contextlib

import torch
import torch.nn as nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(8, 8)

    def forward(self, x, normalize=False, return_hidden=False, unused=False):
        h = self.lin(x)
        out = nn.functional.normalize(h, dim=-1) if normalize else h
        return (out, h) if return_hidden else out


model = torch.compile(Net())
x = torch.randn(2, 8)
"""


@pytest.mark.parametrize("calls, expected", [
    # off, bf16, fp16: 3 states (measured: 3 graphs)
    ("model(x)\nfor dt in (torch.bfloat16, torch.float16):\n    with torch.autocast(\"cpu\", dtype=dt):\n"
     "        model(x)", [("HPU017", 18)]),
    ("model(x)\nwith torch.autocast(\"cpu\", dtype=torch.bfloat16):\n    model(x)\n"
     "with torch.cpu.amp.autocast(dtype=torch.float16):\n    model(x)", [("HPU017", 18)]),
    # two states: one recompile, what a changing value costs anyway
    ("model(x)\nwith torch.autocast(\"cpu\", dtype=torch.bfloat16):\n    model(x)", []),
    # float32 autocast on the CPU is autocast turned off: the same state as none
    ("model(x)\nfor dt in (torch.float32, torch.bfloat16):\n    with torch.autocast(\"cpu\", dtype=dt):\n"
     "        model(x)", []),
    ("for _ in range(3):\n    with torch.autocast(\"cpu\", dtype=torch.bfloat16):\n        model(x)", []),
    # autocast toggled by `enabled=`: two states
    ("for on in (True, False):\n    with torch.autocast(\"cpu\", dtype=torch.bfloat16, enabled=on):\n"
     "        model(x)", []),
])
def test_autocast_states_around_the_calls(calls, expected):
    assert found(MODULE + calls + "\n") == expected


def test_autocast_from_a_helper_that_returns_a_context_per_precision():
    src = MODULE + dedent("""\


    def precision(name):
        if name == "fp32":
            return contextlib.nullcontext()
        return torch.autocast("cpu", dtype={"bf16": torch.bfloat16, "fp16": torch.float16}[name])


    def evaluate(net, name):
        with precision(name):
            return net(x)


    for name in ("fp32", "bf16", "fp16"):
        evaluate(model, name)
    """)
    assert found(src) == [("HPU017", 18)]
    [msg] = messages(src)
    assert "3 different autocast states (bf16 on cpu, fp16 on cpu, no autocast)" in msg
    assert "3 graphs, 2 recompiles" in msg and "set_stance(\"force_eager\")" in msg


@pytest.mark.parametrize("calls, expected", [
    ("model(x)\nmodel(x, normalize=True)\nmodel(x, normalize=True, return_hidden=True)", [("HPU017", 18)]),
    ("for n in (False, True):\n    for r in (False, True):\n        model(x, normalize=n, return_hidden=r)",
     [("HPU017", 18)]),
    ("model(x)\nmodel(x, normalize=True)\nmodel(x, normalize=False)", []),  # two combinations
    ("model(x, True, True)\nmodel(x, normalize=True, return_hidden=True)", []),  # one combination
    ("model(x)\nmodel(x, unused=True)\nmodel(x, unused=None)", []),  # a flag forward does not read
    # a flag whose value is not known here: that call is left out, two combinations remain
    ("flag = bool(contextlib.ExitStack)\nmodel(x)\nmodel(x, normalize=flag)\nmodel(x, return_hidden=True)", []),
])
def test_flag_combinations(calls, expected):
    assert found(MODULE + calls + "\n") == expected


def test_the_flag_message_gives_the_count_and_the_calls():
    [msg] = messages(MODULE + "model(x)\nmodel(x, normalize=True)\nmodel(x, normalize=True, return_hidden=True)\n")
    assert "3 combinations of `normalize`, `return_hidden`" in msg
    assert "(`model(x)`, `model(x, normalize=True)`," in msg and "3 graphs, 2 recompiles" in msg


TREES = """\
import torch
import torch.nn as nn

embed = nn.Embedding(10, 4)
join = nn.Linear(8, 4)


def fold(node):
    if isinstance(node, int):
        return embed(torch.tensor(node))
    left, right = node
    return join(torch.cat([fold(left), fold(right)]))


@torch.compile
def encode(tree):
    return {body}


TREES = {trees}
for tree in TREES:
    encode(tree)
"""


@pytest.mark.parametrize("body, trees, expected", [
    ("fold(tree).sum()", "[((1, 2), 3), (1, (2, 3)), ((1, 2), (3, 4))]", [("HPU017", 22)]),
    ("fold(tree).sum()", "[[[1, 2], 3], [1, [2, 3]], [[1, 2], [3, 4]], [[1, 2], 3]]", [("HPU017", 22)]),
    ("fold(tree).sum()", "[((1, 2), 3), ((4, 5), 6), ((7, 8), 9)]", []),  # one structure
    ("fold(tree).sum()", "[((1, 2), 3), (1, (2, 3)), ((4, 5), 6)]", []),  # two structures
    ("embed.weight.sum()", "[((1, 2), 3), (1, (2, 3)), ((1, 2), (3, 4))]", []),  # not read
    ("fold(tree).sum()", "[(1, 2), (1, 2, 3), (4, 5)]", []),  # flat: lengths are another rule's
])
def test_nested_tuples_of_different_structures(body, trees, expected):
    assert found(TREES.format(body=body, trees=trees)) == expected


def test_the_structure_message_counts_at_least_one_graph_per_structure():
    [msg] = messages(TREES.format(body="fold(tree).sum()", trees="[((1, 2), 3), (1, (2, 3)), ((1, 2), (3, 4))]"))
    assert "`tree` is a nested tuple of 3 different structures (`for tree in TREES`)" in msg
    assert "3 structures: at least 3 graphs, 2 recompiles" in msg


PARTIAL = """\
import functools

import torch
import torch.nn as nn
import torch.nn.functional as F

head = nn.Linear(8, 2)


def scaled_mse(a, b, scale=1.0):
    return ((a - b) ** 2).mean() * scale


def make_loss(epoch):
    return functools.partial({fn}, {kw}=0.5 ** epoch)


@torch.compile
def step(x, y, loss_fn):
    return loss_fn(head(x), y)


for epoch in range({n}):
    {made}
    for _ in range(2):
        step(torch.randn(4, 8), torch.randn(4, 2), loss_fn)
"""


@pytest.mark.parametrize("fn, kw, n, made, expected", [
    ("F.smooth_l1_loss", "beta", 4, "loss_fn = make_loss(epoch)", [("HPU017", 26)]),
    ("F.huber_loss", "delta", 12, "loss_fn = make_loss(epoch)", [("HPU017", 26)]),
    ("F.smooth_l1_loss", "beta", 4, "loss_fn = functools.partial(F.smooth_l1_loss, beta=1.0 / (epoch + 1))",
     [("HPU017", 26)]),
    ("F.smooth_l1_loss", "beta", 2, "loss_fn = make_loss(epoch)", []),  # two values: one recompile
    ("scaled_mse", "scale", 4, "loss_fn = make_loss(epoch)", []),  # tensor arithmetic: made dynamic
    ("F.smooth_l1_loss", "beta", 4, "loss_fn = functools.partial(F.smooth_l1_loss, beta=0.5)", []),  # the same
])
def test_a_partial_whose_float_keyword_changes(fn, kw, n, made, expected):
    assert found(PARTIAL.format(fn=fn, kw=kw, n=n, made=made)) == expected


def test_the_partial_message_names_the_keyword_and_the_count():
    [msg] = messages(PARTIAL.format(fn="F.smooth_l1_loss", kw="beta", n=4, made="loss_fn = make_loss(epoch)"))
    assert "`loss_fn` is `functools.partial(F.smooth_l1_loss, beta=...)` (made by make_loss())" in msg
    assert "4 values: 4 graphs, 3 recompiles" in msg


LAYOUTS = """\
import torch
import torch.nn as nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 4, 3)

    def forward(self, images):
        return self.conv(images).mean()


def hwc():
    frames = torch.rand(2, 16, 16, 3)
    return frames.permute(0, 3, 1, 2)


def crop():
    return torch.rand(2, 3, 20, 20)[:, :, 2:18, 2:18]


def plain():
    return torch.rand(2, 3, 16, 16)


def rotated():
    return torch.rand(2, 3, 16, 16).transpose(2, 3)


def channels_last():
    return torch.rand(2, 3, 16, 16).contiguous(memory_format=torch.channels_last)


net = torch.compile(Net())
SOURCES = {sources}
for step in range(6):
    {call}
"""


@pytest.mark.parametrize("sources, call, expected", [
    ("[hwc, crop, plain]", "net(SOURCES[step % 3]())", [("HPU015", 35)]),
    ("[hwc, crop, plain]", "images = SOURCES[step % 3]()\n    net(images)", [("HPU015", 35)]),
    ("(plain, rotated, crop, hwc)", "for load in SOURCES:\n        net(load())", [("HPU015", 35)]),
    ("[hwc, channels_last, plain]", "net(SOURCES[step % 3]())", []),  # permuted HWC is channels-last: 2
    ("[plain, crop, lambda: torch.rand(4, 3, 24, 24)[:, :, 4:20, 4:20]]", "net(SOURCES[step % 3]())", []),
    ("[hwc, crop, plain]", "net(SOURCES[step % 3]().contiguous())", []),  # one layout
    ("[hwc, crop, plain]", "net(torch.stack([s()[0] for s in SOURCES]))", []),
])
def test_inputs_of_several_memory_layouts(sources, call, expected):
    assert found(LAYOUTS.format(sources=sources, call=call)) == expected


def test_the_layout_message_says_each_layout():
    [msg] = messages(LAYOUTS.format(sources="[hwc, crop, plain]", call="net(SOURCES[step % 3]())"))
    assert "3 different memory layouts (channels-last order, a slice of a larger tensor, contiguous)" in msg
    assert "3 layouts: 3 graphs, 2 recompiles" in msg and "`x.contiguous()`" in msg
