"""The tenth held-out set's kinds, statically (no torch): iterators made outside the compiled
function and sorts of host numbers (HPU012), dropout rates set between calls (HPU016), and values
Dynamo keeps static whatever automatic dynamic does (HPU017): an int bounding a `range` loop, a
float that an op takes as a number, a list of strings whose items are read, `next()` of an
`itertools.count`. Each kind was measured on torch 2.13 (fixtures in fixtures/HPU012, HPU016,
HPU017 carry the counts)."""
from __future__ import annotations

from textwrap import dedent

import pytest

from hpulint import Config, lint_source

COMPILE = ("HPU012", "HPU013", "HPU014", "HPU015", "HPU016", "HPU017")


def found(src: str) -> list:
    return [(f.code, f.line) for f in lint_source(dedent(src), "t.py", Config()) if f.code in COMPILE]


def messages(src: str, code: str) -> list:
    return [f.message for f in lint_source(dedent(src), "t.py", Config()) if f.code == code]


LOADER = """\
import torch
from torch.utils.data import DataLoader, TensorDataset

loader = DataLoader(TensorDataset(torch.randn(32, 4)), batch_size=8)
it = {it}


def batches():
    while True:
        yield torch.randn(8, 4)


@torch.compile
def step({params}):
    {body}
    return x.sum()


for _ in range(3):
    step({args})
"""


@pytest.mark.parametrize("it, params, body, args, expected", [
    ("iter(loader)", "", "(x,) = next(it)", "", [("HPU012", 15)]),
    ("iter([torch.randn(4), torch.randn(4)])", "", "x = next(it)", "", [("HPU012", 15)]),
    ("batches()", "", "x = next(it)", "", [("HPU012", 15)]),
    ("iter(loader)", "", "(x,) = next(iter(loader))", "", [("HPU012", 15)]),
    ("iter(loader)", "", "x = sum(b for (b,) in loader)", "", []),  # a generator expression: not a for
    ("iter(loader)", "xs", "x = next(iter(xs))", "[torch.randn(4)]", []),  # its own argument: traced
    ("iter(loader)", "x", "pass", "next(it)[0]", []),  # next() in the eager loop
])
def test_next_on_an_iterator_made_outside_the_compiled_function(it, params, body, args, expected):
    assert found(LOADER.format(it=it, params=params, body=body, args=args)) == expected


def test_for_over_a_dataloader_in_the_compiled_function():
    body = "x = torch.zeros(())\n    for (b,) in loader:\n        x = x + b.sum()"
    src = LOADER.format(it="None", params="", body=body, args="")
    assert found(src) == [("HPU012", 16)]
    assert "iteration of a `DataLoader`" in messages(src, "HPU012")[0]


SORT = """\
import torch


@torch.compile
def f(cost):
    out = []
    for r, row in enumerate(cost.tolist()):
        {line}
    return torch.tensor(out)


for _ in range(3):
    f(torch.randn(3, 4))
"""


@pytest.mark.parametrize("line, expected", [
    ("out.append(sorted(range(len(row)), key=row.__getitem__)[0])", [("HPU012", 7), ("HPU012", 8)]),
    ("out.append(sorted(row)[0])", [("HPU012", 7), ("HPU012", 8)]),
    ("out.append(max(range(len(row)), key=lambda i: row[i]))", [("HPU012", 7), ("HPU012", 8)]),
    ("row.sort(); out.append(row[0])", [("HPU012", 7), ("HPU012", 8)]),
    ("out.append(min(row))", [("HPU012", 7)]),  # traced: only the read
    ("out.append(sorted(range(r + 1))[0])", [("HPU012", 7)]),  # the index is not a read value
])
def test_sorting_numbers_read_from_a_tensor(line, expected):
    assert found(SORT.format(line=line)) == expected


def test_sort_message_names_the_break_and_the_fix():
    (_, msg) = messages(SORT.format(line="out.append(sorted(row)[0])"), "HPU012")
    assert "sort with non-constant keys" in msg and "torch.argsort" in msg


DROPOUT = """\
import torch
import torch.nn as nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(8, 8)
        self.drop = nn.Dropout(0.0)
        self.rate = 0.0
        self.temperature = 1.0

    def forward(self, x):
        h = nn.functional.dropout(self.lin(x), self.rate, self.training) / self.temperature
        return self.drop(h)


def schedule(epoch):
    return 0.5 * min(1.0, epoch / 4)


net = Net()
cnet = torch.compile(net)
for epoch in range({n}):
    {set}
    cnet(torch.randn(4, 8))
"""


@pytest.mark.parametrize("n, line, expected", [
    (6, "for m in net.modules():\n        if isinstance(m, nn.Dropout):\n            m.p = schedule(epoch)",
     [("HPU016", 28)]),
    (6, "net.drop.p = 0.1 * epoch", [("HPU016", 26)]),
    (6, "net.rate = 0.05 * epoch", [("HPU016", 26)]),
    (6, "net.temperature = 1.0 + epoch", []),  # tensor arithmetic: dynamic after one recompile
    (2, "net.drop.p = 0.1 * epoch", []),  # two values: one recompile
    (6, "for m in net.modules():\n        m.p = schedule(epoch)", []),  # not known to be a dropout
])
def test_dropout_rate_set_between_calls_of_the_compiled_module(n, line, expected):
    assert found(DROPOUT.format(n=n, set=line)) == expected


def test_dropout_message_counts_and_fix():
    (msg,) = messages(DROPOUT.format(n=6, set="net.drop.p = 0.1 * epoch"), "HPU016")
    assert "6 values: 6 graphs, 5 recompiles" in msg and "tensor buffer" in msg


ARGS = """\
import random

import torch
import torch.nn.functional as F

SCALES = [0.5, 0.75, 1.0, 1.25]


@torch.compile
def f(x, value):
    {body}


{loop}
    f(torch.randn(1, 3, 8, 8), {arg})
"""


@pytest.mark.parametrize("body, loop, arg, expected", [
    # a float an op takes as a number
    ("return F.interpolate(x, scale_factor=value)", "for s in SCALES:", "s", [("HPU017", 15)]),
    ("return F.interpolate(x, scale_factor=value)", "for step in range(12):\n    s = random.choice(SCALES)", "s",
     [("HPU017", 16)]),
    ("return F.dropout(x, value)", "for epoch in range(20):", "0.01 * epoch", [("HPU017", 15)]),
    ("return F.pad(x, (1, 1), value=value)", "for v in (0.0, 0.5, 1.0):", "v", [("HPU017", 15)]),
    ("return F.interpolate(x, scale_factor=value)", "for s in (1.0, 2.0):", "s", []),  # two values
    ("return x * value", "for s in SCALES:", "s", []),  # tensor arithmetic: dynamic after one
    ("return F.leaky_relu(x, value)", "for s in SCALES:", "s", []),
    # an int a Python loop runs to
    ("for _ in range(value):\n        x = x + 1\n    return x", "for n in [3, 5, 4, 6]:", "n", [("HPU017", 17)]),
    ("for _ in range(value):\n        x = x + 1\n    return x", "for req in [{'n': 2}, {'n': 3}, {'n': 5}]:",
     "req['n']", [("HPU017", 17)]),
    ("for _ in range(value):\n        x = x + 1\n    return x", "for i in range(100):", "i % 3 + 1", [("HPU017", 17)]),
    ("for _ in range(value):\n        x = x + 1\n    return x", "for i in range(100):", "i % 2 + 1", []),
    ("return x[:value] * value", "for n in [3, 5, 4, 6]:", "n", []),  # a slice bound: dynamic after one
    # a list of strings whose items are read
    ("return x * sum(len(v) for v in value)", "for names in [['a'], ['b'], ['c']]:", "names", [("HPU017", 15)]),
    ("return x * len(value)", "for names in [['a'], ['b'], ['c']]:", "names", []),  # the length only
    ("return x * len(value[0])", "for names in [['a'], ['a']]:", "names", []),  # one list
])
def test_values_dynamo_keeps_static(body, loop, arg, expected):
    assert found(ARGS.format(body=body, loop=loop, arg=arg)) == expected


def test_static_value_messages_name_the_guard_the_count_and_the_fix():
    (msg,) = messages(ARGS.format(body="return F.interpolate(x, scale_factor=value)",
                                  loop="for step in range(12):\n    s = random.choice(SCALES)", arg="s"), "HPU017")
    assert "F.interpolate(scale_factor=...)" in msg and "up to 4 values: up to 4 graphs, up to 3 recompiles" in msg
    (msg,) = messages(ARGS.format(body="for _ in range(value):\n        x = x + 1\n    return x",
                                  loop="for n in [3, 5, 4, 6]:", arg="n"), "HPU017")
    assert "unrolls the loop" in msg and "4 values: 4 graphs, 3 recompiles" in msg
    (msg,) = messages(ARGS.format(body="for _ in range(value):\n        x = x + 1\n    return x",
                                  loop="for i in range(100):", arg="i % 3 + 1"), "HPU017")
    assert "3 values: 3 graphs, 2 recompiles" in msg


COUNT = """\
import itertools

import torch
import torch.nn as nn


class Encoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(4, 4)
        self.ids = itertools.count()

    def forward(self, x):
        return self.lin(x), next(self.ids)


ids = itertools.count(1)


@torch.compile
def handle(x):
    return x + 1, next(ids)


enc = torch.compile(Encoder())
for _ in range(10):
    handle(torch.randn(4))
    enc(torch.randn(2, 4))
    tag = next(ids)
"""


def test_next_of_an_itertools_count_in_the_compiled_region():
    assert found(COUNT) == [("HPU017", 14), ("HPU017", 22)]
    assert all("counter's position" in m for m in messages(COUNT, "HPU017"))


TABLE = """\
import torch


class Schedule:
    def __init__(self, steps):
        self.sigmas = [0.7 ** k for k in range(steps)] + [0.0]


sched = Schedule(12)
LEVELS = {levels}


@torch.compile
def step(x, i):
    return x * {read}


for i in {loop}:
    step(torch.randn(4), i)
"""


@pytest.mark.parametrize("levels, read, loop, expected", [
    ("[0.1, 0.2, 0.3, 0.4]", "LEVELS[i]", "range(4)", [("HPU017", 19)]),
    ("[0.1, 0.2, 0.3, 0.4]", "(sched.sigmas[i] - sched.sigmas[i + 1])", "range(len(sched.sigmas) - 1)",
     [("HPU017", 19)]),
    ("torch.tensor([0.1, 0.2, 0.3, 0.4])", "LEVELS[i]", "range(4)", []),  # a tensor: dynamic after one
    ("[0.1, 0.2, 0.3, 0.4]", "LEVELS[1] * i", "range(4)", []),  # a constant index
    ("[0.1, 0.2, 0.3, 0.4]", "LEVELS[i]", "(0, 1)", []),  # two values
])
def test_int_indexing_a_python_list(levels, read, loop, expected):
    assert found(TABLE.format(levels=levels, read=read, loop=loop)) == expected


def test_list_index_message():
    (msg,) = messages(TABLE.format(levels="[0.1, 0.2, 0.3, 0.4]", read="LEVELS[i]", loop="range(4)"), "HPU017")
    assert "indexes the Python list `LEVELS`" in msg and "4 values: 4 graphs, 3 recompiles" in msg
    assert "torch.tensor(values)" in msg


STORE = """\
import torch
import torch.nn as nn


class Store:
    def __init__(self):
        self.maps = {{"a": [], "b": []}}
        self.log = [[], []]

    def record(self, place, t):
        {line}

    def reset(self):
        {reset}


class Layer(nn.Module):
    def __init__(self, place, store):
        super().__init__()
        self.lin = nn.Linear(4, 4)
        self.place = place
        self.store = store

    def forward(self, x):
        y = self.lin(x)
        self.store.record(self.place, y)
        return y


store = Store()
net = torch.compile(nn.Sequential(Layer("a", store), Layer("b", store)))
for _ in range(10):
    net(torch.randn(2, 4))
"""


@pytest.mark.parametrize("line, reset, expected", [
    ("self.maps[place].append(t.detach().mean())", "pass", [("HPU017", 11)]),
    ("self.maps[place].append(t.detach().mean())", "self.maps = {'a': [], 'b': []}", []),  # emptied
    ("self.maps[place].append(t.detach().mean())", "self.maps['a'].clear()", []),
    ("self.log[0].append(t.detach().mean())", "pass", []),  # a list of lists: not followed
])
def test_list_in_a_dict_of_a_plain_object_appended_in_the_compiled_region(line, reset, expected):
    assert found(STORE.format(line=line, reset=reset)) == expected


def test_dict_of_lists_message():
    (msg,) = messages(STORE.format(line="self.maps[place].append(t.detach().mean())", reset="pass"), "HPU017")
    assert "a dict of lists of a Store object" in msg and "length of each list in it" in msg
