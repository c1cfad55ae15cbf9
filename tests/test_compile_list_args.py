"""The twelfth held-out set's list-argument kinds, statically (no torch): a list of ints drawn at
random on every pass and a list kept on an object and appended to in the loop (grown, or cut to a
window), given to a compiled callable (HPU017). Each kind was measured on torch 2.13 (fixtures in
fixtures/HPU017 carry the counts)."""
from __future__ import annotations

from textwrap import dedent

import pytest

from hpulint import Config, lint_source

COMPILE = ("HPU012", "HPU013", "HPU014", "HPU015", "HPU016", "HPU017")


def found(src: str) -> list:
    return [(f.code, f.line) for f in lint_source(dedent(src), "t.py", Config()) if f.code in COMPILE]


def messages(src: str, code: str) -> list:
    return [f.message for f in lint_source(dedent(src), "t.py", Config()) if f.code == code]


DRAWN = """\
import random

import torch


@torch.compile
def pick(x, cols):
    return x[:, cols].sum()


for _ in range(12):
    cols = {draw}
    pick(torch.randn(4, 24), cols)
"""


@pytest.mark.parametrize("draw, expected", [
    ("random.sample(range(24), 18)", [("HPU017", 13)]),
    ("sorted(random.sample(range(24), 18))", [("HPU017", 13)]),
    ("random.choices(range(24), k=18)", [("HPU017", 13)]),
    ("torch.randperm(24)[:18].tolist()", [("HPU017", 13)]),
    ("torch.tensor(random.sample(range(24), 18))", []),  # a tensor: one graph
    ("list(range(18))", []),  # the same list every pass
])
def test_a_list_of_ints_drawn_at_random(draw, expected):
    assert found(DRAWN.format(draw=draw)) == expected


@pytest.mark.parametrize("use, expected", [
    ("x[:, cols].sum()", [("HPU017", 13)]),
    ("x.sum() * sum(cols)", []),  # arithmetic: made dynamic (3 graphs measured), not a storm
    ("x[:, torch.tensor(cols)].sum()", []),  # a tensor made inside: the same
])
def test_a_drawn_list_is_reported_where_it_indexes(use, expected):
    src = DRAWN.format(draw="random.sample(range(24), 18)").replace("x[:, cols].sum()", use)
    assert found(src) == expected


def test_a_drawn_list_given_to_a_helper_that_indexes():
    src = """\
    import random

    import torch


    def keep(x, columns):
        out = torch.zeros_like(x)
        out[:, columns] = x[:, columns]
        return out


    @torch.compile
    def step(x, columns):
        return keep(x, columns).sum()


    for _ in range(12):
        step(torch.randn(4, 24), sorted(random.sample(range(24), 18)))
    """
    assert found(src) == [("HPU017", 18)]


def test_the_drawn_list_message_says_what_to_pass():
    [msg] = messages(DRAWN.format(draw="random.sample(range(24), 18)"), "HPU017")
    assert "`cols` is a list of ints drawn at random" in msg and "`torch.tensor(cols)`" in msg


HISTORY = """\
import torch


class Solver:
    def __init__(self):
        self.history = []
        self.update = torch.compile(self.combine)

    @staticmethod
    def combine(history, x):
        return x + torch.stack(history).mean(0)

    def run(self, x):
        for _ in range(10):
            {grow}
            {cut}
            x = self.update(self.history, x)
        return x


Solver().run(torch.randn(3))
"""


@pytest.mark.parametrize("grow, cut, expected, words", [
    ("self.history.append(x * 0.5)", "pass", [("HPU017", 17)], "grows on every pass"),
    ("self.history.append(x * 0.5)", "self.history = self.history[-3:]", [("HPU017", 17)],
     "cut to `self.history[-3:]`"),
    ("self.history = [x * 0.5]", "pass", [], None),  # a new one-item list each pass
    ("self.history.append(x * 0.5)", "self.history = []", [], None),  # emptied each pass
])
def test_a_list_attribute_appended_in_the_loop(grow, cut, expected, words):
    src = HISTORY.format(grow=grow, cut=cut)
    assert found(src) == expected
    if words:
        assert words in messages(src, "HPU017")[0]
