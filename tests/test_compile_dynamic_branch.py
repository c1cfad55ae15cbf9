"""The twelfth held-out set's branch kinds, statically (no torch): a Python branch on a value Dynamo
makes dynamic after one recompile, whose test then becomes a guard of its own: a number argument the
calls give values on both sides of the test (HPU017, at the `if`), and the size of a tensor the loop
grows by concatenation (HPU015, at the call). Each kind was measured on torch 2.13 (fixtures in
fixtures/HPU015 and HPU017 carry the counts)."""
from __future__ import annotations

from textwrap import dedent

import pytest

from hpulint import Config, lint_source

COMPILE = ("HPU012", "HPU013", "HPU014", "HPU015", "HPU016", "HPU017")


def found(src: str) -> list:
    return [(f.code, f.line) for f in lint_source(dedent(src), "t.py", Config()) if f.code in COMPILE]


def messages(src: str, code: str) -> list:
    return [f.message for f in lint_source(dedent(src), "t.py", Config()) if f.code == code]


NUMBER = """\
import torch


@torch.compile
def step(x, scale):
    {test}
        return x * scale
    return x


for s in {values}:
    step(torch.randn(4), s)
"""


@pytest.mark.parametrize("test, values, expected", [
    ("if scale > 1.0:", "(7.5, 5.0, 1.0, 7.5, 3.0)", [("HPU017", 6)]),
    ("if 1.0 < scale:", "(7.5, 5.0, 1.0, 7.5, 3.0)", [("HPU017", 6)]),
    ("if scale > 5:", "range(12)", [("HPU017", 6)]),
    ("if scale > 1.0:", "(7.5, 5.0, 3.0, 2.0)", []),  # one side only: made dynamic, one graph for the rest
    ("if scale > 1.0:", "(7.5, 7.5, 7.5)", []),  # one value
    ("if scale:", "(7.5, 0.0, 3.0)", []),  # not a comparison with a number
])
def test_a_branch_on_a_number_argument(test, values, expected):
    assert found(NUMBER.format(test=test, values=values)) == expected


def test_a_number_given_through_the_callers_keyword():
    src = """\
    import torch


    @torch.compile
    def denoise(x, guidance):
        use_cfg = guidance > 1.0
        if use_cfg:
            return x * guidance
        return x


    def serve(x, guidance):
        return denoise(x, guidance)


    for g in (7.5, 1.0, 3.0):
        serve(torch.randn(4), guidance=g)
    """
    assert found(src) == [("HPU017", 7)]
    [msg] = messages(src, "HPU017")
    assert "`use_cfg = guidance > 1.0`" in msg and "3 graphs" in msg


GROWING = """\
import torch


@torch.compile
def step(ids):
    s = ids.float().sum(-1)
    if {test}:
        s = s * 0
    return s


ids = torch.randint(0, 5, (2, 4))
for _ in range(12):
    step(ids)
    ids = {update}
"""


@pytest.mark.parametrize("test, update, expected", [
    ("ids.shape[-1] < 10", "torch.cat([ids, ids[:, -1:]], dim=-1)", [("HPU015", 14)]),
    ("ids.shape[1] >= 10", "torch.cat([ids, ids[:, -1:]], dim=1)", [("HPU015", 14)]),
    ("ids.shape[-1] < 10", "ids + 1", []),  # the size never changes
    ("ids.sum() < 10", "torch.cat([ids, ids[:, -1:]], dim=-1)", [("HPU013", 7)]),  # a tensor test: HPU013's
])
def test_a_branch_on_the_size_of_a_growing_input(test, update, expected):
    assert found(GROWING.format(test=test, update=update)) == expected


def test_a_size_branch_in_a_called_processor():
    src = """\
    import torch


    class MinLength:
        def __init__(self, n):
            self.n = n

        def __call__(self, input_ids, scores):
            if input_ids.shape[-1] < self.n:
                scores = scores - 1.0
            return scores


    processors = [MinLength(8)]


    @torch.compile
    def decode(input_ids):
        scores = input_ids.float()
        for proc in processors:
            scores = proc(input_ids, scores)
        return scores.argmax(-1, keepdim=True)


    input_ids = torch.randint(0, 9, (2, 3))
    for _ in range(10):
        input_ids = torch.cat([input_ids, decode(input_ids)], dim=-1)
    """
    assert found(src) == [("HPU015", 27)]
    [msg] = messages(src, "HPU015")
    assert "`input_ids.shape[-1] < self.n` in __call__()" in msg
