"""The eleventh held-out set's recompiling kinds, statically (no torch): batches padded to their own
longest item and `mark_static` in a helper (HPU015), modules of a stack built with different ints
passed one by one to a compiled function, and `torch.tensor()` of a list attribute of the objects a
loop passes (HPU017). Each kind was measured on torch 2.13 (fixtures in fixtures/HPU015 and HPU017
carry the counts)."""
from __future__ import annotations

from textwrap import dedent

import pytest

from hpulint import Config, lint_source

COMPILE = ("HPU012", "HPU013", "HPU014", "HPU015", "HPU016", "HPU017")


def found(src: str) -> list:
    return [(f.code, f.line) for f in lint_source(dedent(src), "t.py", Config()) if f.code in COMPILE]


def messages(src: str, code: str) -> list:
    return [f.message for f in lint_source(dedent(src), "t.py", Config()) if f.code == code]


PADDED = """\
import torch
import torch.nn.functional as F
from torch.nn.utils.rnn import pad_sequence

MAX_LEN = 40


def collate(docs):
    {collate}


def encode(tokens):
    return tokens.float().mean(1)


encode_static = torch.compile(encode, dynamic=False)
docs = [torch.randint(1, 100, (n,)) for n in torch.randint(3, 40, (48,)).tolist()]
for i in range(0, len(docs), 4):
    encode_static({arg})
"""


@pytest.mark.parametrize("collate, arg, expected", [
    ("return pad_sequence(docs, batch_first=True)", "collate(docs[i:i + 4])", [("HPU015", 16)]),
    ("longest = max(len(d) for d in docs)\n    return torch.stack([F.pad(d, (0, longest - len(d))) for d in docs])",
     "collate(docs[i:i + 4])", [("HPU015", 16)]),
    ("longest = max(map(len, docs))\n    out = torch.zeros(len(docs), longest)\n    return out",
     "collate(docs[i:i + 4])", [("HPU015", 16)]),
    ("return None", "pad_sequence(docs[i:i + 4], batch_first=True)", [("HPU015", 16)]),
    # one length for every batch: a window of four documents, each padded to MAX_LEN
    ("return torch.stack([F.pad(d[:MAX_LEN], (0, MAX_LEN - len(d[:MAX_LEN]))) for d in docs])",
     "collate(docs[i:i + 4])", []),
])
def test_a_batch_padded_to_its_longest_item(collate, arg, expected):
    src = PADDED.format(collate=collate, arg=arg)
    lines = src.count("\n", 0, src.index("dynamic=False")) + 1
    assert found(src) == [(c, lines) for c, _ in expected]


def test_padded_message_says_the_size_follows_the_data():
    (msg,) = messages(PADDED.format(collate="return pad_sequence(docs, batch_first=True)",
                                    arg="collate(docs[i:i + 4])"), "HPU015")
    assert "called in a loop with a size padded to the longest item of each batch" in msg


WINDOW = """\
import torch

f = torch.compile(lambda x: x.sum(), dynamic=False)
seq = torch.randn(4, 100)
for i in range(0, 90, 3):
    f(seq[:, {cut}])
"""


@pytest.mark.parametrize("cut, expected", [
    ("i:i + 8", []),  # a window of 8 that moves: one size
    (":i + 8", [("HPU015", 3)]),  # a prefix that grows
    ("i:2 * i + 1", [("HPU015", 3)]),
])
def test_a_slice_that_keeps_its_width_is_one_size(cut, expected):
    assert found(WINDOW.format(cut=cut)) == expected


HELPER = """\
import torch
import torch.nn as nn

scorer = torch.compile(nn.Linear(32, 1))
SIZES = {sizes}


def serve(queue):
    batch = torch.stack(queue).float()
    torch._dynamo.mark_static(batch, 0)
    return scorer(batch)


for n in SIZES:
    serve([torch.randn(32) for _ in range(n)])
"""


@pytest.mark.parametrize("sizes, expected, said", [
    ("[3, 7, 1, 12, 5, 9, 2, 16, 4, 11]", [("HPU015", 10)], "takes 10 values: a recompile for each new one"),
    ("[4, 8, 16]", [("HPU015", 10)], "takes 3 values: 3 graphs, 2 recompiles"),
    ("[8, 16]", [], None),  # two sizes: one recompile, as automatic dynamic shapes cost anyway
    ("[16, 16, 16]", [], None),
])
def test_mark_static_in_a_helper_fed_sizes_that_change(sizes, expected, said):
    src = HELPER.format(sizes=sizes)
    assert found(src) == expected
    if said:
        (msg,) = messages(src, "HPU015")
        assert "`mark_static` keeps the size of `batch` static (`batch` is `torch.stack(queue)`)" in msg and said in msg


def test_mark_static_in_a_helper_on_a_tensor_argument():
    src = HELPER.format(sizes="[4, 8, 16]").replace("batch = torch.stack(queue).float()", "batch = queue").replace(
        "serve([torch.randn(32) for _ in range(n)])", "serve(torch.randn(n, 32))")
    assert found(src) == [("HPU015", 10)]


STACK = """\
import torch
import torch.nn as nn


class Block(nn.Module):
    def __init__(self, channels, {param}):
        super().__init__()
        {init}

    def forward(self, x):
        return {forward}


blocks = nn.ModuleList(Block(8, {made}) for i in range({n}))


@torch.compile
def run(block, x):
    return block(x)


x = torch.randn(2, 8, 64)
for block in blocks:
    x = run(block, x)
"""
CONV = "self.conv = nn.Conv1d(channels, channels, 3, dilation=dilation, padding=dilation)"


@pytest.mark.parametrize("param, init, forward, made, n, expected", [
    ("dilation", CONV, "x + self.conv(x)", "2 ** i", 10, [("HPU017", 24)]),
    ("shift", "self.shift = shift", "torch.roll(x, self.shift, -1)", "i", 12, [("HPU017", 24)]),
    ("shift", "self.shift = shift", "torch.roll(x, self.shift, -1)", "i", 4, [("HPU017", 24)]),
    ("shift", "self.shift = shift", "torch.roll(x, self.shift, -1)", "i", 2, []),  # one recompile
    ("shift", "self.shift = shift", "torch.roll(x, self.shift, -1)", "1", 12, []),  # one value
    ("kernel", "self.conv = nn.Conv1d(channels, channels, kernel, padding='same')", "self.conv(x)", "2 * i + 1",
     12, []),  # a parameter's shape: a shape guard, not reported here
    ("scale", "self.scale = scale", "x * self.scale", "0.5 * i", 12, []),  # a float
])
def test_modules_of_a_stack_passed_to_one_compiled_function(param, init, forward, made, n, expected):
    assert found(STACK.format(param=param, init=init, forward=forward, made=made, n=n)) == expected


def test_stack_message_names_the_value_and_the_count():
    (msg,) = messages(STACK.format(param="shift", init="self.shift = shift", forward="torch.roll(x, self.shift, -1)",
                                   made="i", n=4), "HPU017")
    assert msg.startswith("`block` is each module of `blocks`, built as `Block(8, i)` for each `i` in `range(4)`, "
                          "and `shift` is read as `self.shift` in its forward()")
    assert "takes 4 values: 4 graphs, 3 recompiles" in msg


def test_the_stack_compiled_as_one_module_is_quiet():
    src = STACK.format(param="shift", init="self.shift = shift", forward="torch.roll(x, self.shift, -1)",
                       made="i", n=12).replace("x = run(block, x)", "x = block(x)")
    assert found(src) == []


REQUESTS = """\
from dataclasses import dataclass, field

import torch


@dataclass
class Request:
    temperature: float = 1.0
    stop_ids: list = field(default_factory=list)


requests = {requests}


@torch.compile
def sample(logits, request):
    stop = torch.tensor(request.stop_ids)
    return torch.isin(logits.argmax(-1), stop)


for request in requests:
    sample(torch.randn(2, 32), request)
"""


@pytest.mark.parametrize("requests, expected", [
    ("[Request(stop_ids=list(range(n + 1))) for n in range(10)]", [("HPU017", 17)]),
    ("[Request(stop_ids=[0] * n) for n in range(1, 10)]", [("HPU017", 17)]),
    ("[Request(stop_ids=[0]), Request(stop_ids=[0, 1]), Request(stop_ids=[0, 1, 2])]", [("HPU017", 17)]),
    ("[Request(stop_ids=[0, 1]), Request(stop_ids=[2, 3])]", []),  # one length
    ("[Request(temperature=0.5 * n, stop_ids=[0]) for n in range(10)]", []),
])
def test_a_tensor_of_a_list_attribute_of_the_objects_passed(requests, expected):
    assert found(REQUESTS.format(requests=requests)) == expected


def test_request_message_names_the_attribute_and_how_it_is_made():
    (msg,) = messages(REQUESTS.format(requests="[Request(stop_ids=list(range(n + 1))) for n in range(10)]"), "HPU017")
    assert msg.startswith("`torch.tensor(request.stop_ids)` makes a tensor from `request.stop_ids`, a Python list the "
                          "caller passes (the `stop_ids` of each `Request(stop_ids=list(range(n + 1)))`)")
