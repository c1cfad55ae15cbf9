"""The recompile rules' counted cases: a known number of values that Dynamo guards as constants
(3 or more: 2 or more recompiles) is reported with the count; 2 values (one recompile, what
automatic dynamic costs anyway) are not. Exact codes, lines and counts in the messages."""
from __future__ import annotations

from textwrap import dedent

import pytest

from hpulint import Config, lint_source


def found(src: str) -> list:
    return [(f.code, f.line) for f in lint_source(dedent(src), "t.py", Config())]


def messages(src: str, code: str) -> list:
    return [f.message for f in lint_source(dedent(src), "t.py", Config()) if f.code == code]


DECODER = """\
import torch
import torch.nn as nn


class Decoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(8, 8)

    def forward(self, x, past):
        keys = torch.cat([past, self.proj(x)], dim=1)
        return keys[:, -1:], keys


model = torch.compile(Decoder(), {kw})
x, past = torch.randn(1, 1, 8), torch.randn(1, 2, 8)
for _ in range({n}):
    x, past = model(x, past)
"""


@pytest.mark.parametrize("kw, n, expected, says", [
    ("dynamic=False", 12, [("HPU015", 15)], "eager fallback"),
    ("dynamic=False", 4, [("HPU015", 15)], "4 values: 4 graphs, 3 recompiles"),
    ("dynamic=False", 2, [], None),  # two lengths: one recompile
    ("mode='max-autotune'", 12, [], None),  # default: the length becomes dynamic
])
def test_output_fed_back_grown_with_dynamic_false(kw, n, expected, says):
    src = DECODER.format(kw=kw, n=n)
    assert found(src) == expected
    if says:
        assert says in messages(src, "HPU015")[0]


def test_output_fed_back_without_growth_is_quiet():
    # forward returns the state as it came: its size never changes
    assert found(DECODER.format(kw="dynamic=False", n=12).replace("return keys[:, -1:], keys",
                                                                  "return keys[:, -1:], past")) == []


@pytest.mark.parametrize("sizes, expected", [
    ("(8, 12, 16, 20, 24, 28)", [("HPU015", 6)]),
    ("(8, 16, 24)", [("HPU015", 6)]),
    ("(8, 16)", []),  # two sizes: one recompile, what automatic dynamic costs too
])
def test_mark_static_over_a_few_literal_sizes_reports_the_count(sizes, expected):
    src = f"""\
        import torch

        encoder = torch.compile(torch.nn.Linear(4, 4))
        for n in {sizes}:
            x = torch.randn(n, 4)
            torch._dynamo.mark_static(x, 0)
            encoder(x)
        """
    assert found(src) == expected
    if expected:
        k = len(set(sizes.strip("()").split(", ")))
        assert f"{k} graphs, {k - 1} recompiles" in messages(src, "HPU015")[0]


ACTIVE = """\
import torch
import torch.nn as nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.blocks = nn.ModuleList(nn.Linear(4, 4) for _ in range(8))
        self.active = 1

    def forward(self, x):
        for block in self.blocks[: self.active]:
            x = block(x)
        return x


net = Net()
cnet = torch.compile(net)
for epoch in {loop}:
    net.active = {value}
    for _ in range(2):
        cnet(torch.randn(2, 4))
"""


@pytest.mark.parametrize("loop, value, expected, says", [
    ("range(6)", "epoch + 1", [("HPU016", 22)], "6 values: 6 graphs, 5 recompiles"),
    ("range(n_epochs)", "epoch + 1", [("HPU016", 22)], "eager fallback"),
    ("range(2)", "epoch + 1", [], None),  # two values: one recompile
    ("range(6)", "epoch % 2 == 0", [], None),  # a bool: two values at most
    ("range(6)", "3", [], None),  # the same value every epoch
])
def test_module_attribute_set_from_the_loop_counter(loop, value, expected, says):
    src = ACTIVE.format(loop=loop, value=value)
    assert found(src) == expected
    if says:
        assert says in messages(src, "HPU016")[0]


def test_attribute_of_a_module_not_compiled_is_quiet():
    src = ACTIVE.format(loop="range(6)", value="epoch + 1").replace("cnet = torch.compile(net)", "cnet = net")
    assert found(src) == []


ENUM = """\
import enum

import torch


class Pool(enum.Enum):
    MEAN = "mean"
    MAX = "max"
    {third}


@torch.compile
def pool(h, how):
    return h.mean(1) if how is Pool.MEAN else h.amax(1)


for _ in range(2):
    for how in {values}:
        pool(torch.randn(2, 3, 4), how)
"""


@pytest.mark.parametrize("third, values, expected", [
    ('FIRST = "first"', "Pool", [("HPU017", 19)]),  # three members: 3 graphs, 2 recompiles
    ("", "Pool", []),  # two members: one recompile
    ('FIRST = "first"', "[Pool.MEAN, Pool.MAX, Pool.FIRST]", [("HPU017", 19)]),
    ('FIRST = "first"', '("mean", "max", "first")', [("HPU017", 19)]),
    ('FIRST = "first"', '("mean", "max")', []),
])
def test_enum_members_and_strings_cycled(third, values, expected):
    src = ENUM.format(third=third, values=values)
    assert found(src) == expected
    if expected:
        assert "3 graphs, 2 recompiles" in messages(src, "HPU017")[0]


DISPATCH = """\
import torch


@torch.compile
def encode(batch):
    if isinstance(batch, dict):
        batch = batch["x"]
    elif isinstance(batch, (list, tuple)):
        batch = batch[0]
    return batch.relu()


x = torch.randn(2, 3)
for batch in ({forms}):
    encode(batch)
"""


@pytest.mark.parametrize("forms, expected, says", [
    ('x, (x,), {"x": x}, [x]', [("HPU017", 15)], "4 types: 4 graphs, 3 recompiles"),
    ('(x,), {"x": x}, [x]', [("HPU017", 15)], "3 types: 3 graphs, 2 recompiles"),
    ("(x,), [x]", [], None),  # two types: one recompile, as automatic dynamic costs
    ("(x,), (x, x), (x,)", [], None),  # one type
])
def test_argument_cycled_over_container_types(forms, expected, says):
    src = DISPATCH.format(forms=forms)
    assert found(src) == expected
    if says:
        [msg] = messages(src, "HPU017")
        assert says in msg and "guards on each argument's type" in msg
