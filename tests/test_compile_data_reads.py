"""The fourteenth held-out set's graph-break kinds, statically (no torch): `in` on a tensor,
`math.<fn>()` of a tensor, `torch._assert` of a tensor and `retain_grad()` (HPU012), a tensor
factory sized from a tensor's value and `F.ctc_loss` (HPU014). Each kind was measured on torch 2.13
(fixtures in fixtures/HPU012 and fixtures/HPU014 carry the counts)."""
from __future__ import annotations

from textwrap import dedent

import pytest

from hpulint import Config, lint_source

COMPILE = ("HPU012", "HPU013", "HPU014", "HPU015", "HPU016", "HPU017")

BODY = """\
import math

import torch
import torch.nn.functional as F
{flag}

@torch.compile
def f(x, lengths):
    y = x * 2
    {line}
    return y


for n in (5, 6, 7):
    f(torch.randn(3, 8), torch.tensor([n, 4, 3]))
"""


def found(line: str, flag: str = "") -> list:
    src = dedent(BODY).format(line=line, flag=flag)
    return [(f.code, f.line) for f in lint_source(src, "t.py", Config()) if f.code in COMPILE]


@pytest.mark.parametrize("line, expected", [
    ("found = 3 in lengths", [("HPU012", 10)]),
    ("found = 3 not in lengths[:, 0]", [("HPU012", 10)]),
    ("found = 3 in (1, 2, 3)", []),  # a tuple of ints: traced
    ("s = math.sqrt(y.var())", [("HPU012", 10)]),
    ("ok = math.isfinite(y.norm())", [("HPU012", 10)]),
    ("s = math.sqrt(x.shape[-1])", []),  # a size: a Python int
    ("torch._assert((y > -100).all(), 'range')", [("HPU012", 10)]),
    ("torch._assert(x.shape[0] == 3, 'rows')", []),
    ("torch._assert_async((y > -100).all())", []),
    ("y.retain_grad()", [("HPU012", 10)]),
    ("pos = torch.arange(lengths.max())", [("HPU014", 10)]),
    ("buf = torch.zeros(lengths.sum(), 4)", [("HPU014", 10)]),
    ("pos = torch.arange(x.shape[1])", []),  # the padded width: a size, not data
    ("buf = torch.zeros(x.size(0), 4)", []),
    ("loss = F.ctc_loss(y.log_softmax(-1)[:, None], lengths[None], lengths[:1], lengths[:1])", [("HPU014", 10)]),
])
def test_breaks(line, expected):
    assert found(line) == expected


@pytest.mark.parametrize("line", ["found = 3 in lengths", "ok = math.isfinite(y.norm())",
                                  "torch._assert((y > -100).all(), 'range')", "pos = torch.arange(lengths.max())"])
def test_traced_under_capture_scalar_outputs(line):
    assert found(line, flag="torch._dynamo.config.capture_scalar_outputs = True\n") == []


def test_ctc_loss_breaks_under_both_capture_flags():
    flags = ("torch._dynamo.config.capture_scalar_outputs = True\n"
             "torch._dynamo.config.capture_dynamic_output_shape_ops = True\n")
    assert found("loss = F.ctc_loss(y[:, None], lengths[None], lengths[:1], lengths[:1])", flags) == [("HPU014", 12)]


def test_messages_name_the_behaviour_and_the_fix():
    src = dedent(BODY).format(line="found = 3 in lengths", flag="")
    [msg] = [f.message for f in lint_source(src, "t.py", Config()) if f.code == "HPU012"]
    assert "`Tensor.__contains__`" in msg and "(ids == pad_id).any()" in msg
    src = dedent(BODY).format(line="pos = torch.arange(lengths.max())", flag="")
    [msg] = [f.message for f in lint_source(src, "t.py", Config()) if f.code == "HPU014"]
    assert "Data dependent operator" in msg and "x.shape[1]" in msg
