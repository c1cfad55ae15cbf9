"""`if X is None: X = ...`: a branch that fills what its test asks for runs on the first pass of
a loop (or the first call of a method) only, so a host copy there is not per step
(hpulint/analysis/guards.py, ``fills_once``). Each case has a twin where it runs every step."""
from __future__ import annotations

import textwrap

from hpulint import Config, lint_source

HEAD = """
import numpy as np
import torch
import habana_frameworks.torch.core as htcore
"""


def found(src: str) -> list:
    src = textwrap.dedent(HEAD) + textwrap.dedent(src)
    return [f"{f.code}@{f.line}" for f in lint_source(src, path="case.py", config=Config())]


EVAL = """
def evaluate(model, loader):
    preds = None
    for batch in loader:
        logits = model(batch.to("hpu"))
        {reset}
        if preds is None:
            preds = logits.detach().cpu().numpy()
        else:
            preds = np.append(preds, logits.detach().cpu().numpy(), axis=0)
        htcore.mark_step()
    return preds
"""


def test_the_first_batch_branch_is_not_per_step_but_the_else_branch_is():
    assert found(EVAL.format(reset="pass")) == ["HPU005@14"]


def test_a_name_set_back_to_none_every_pass_fills_every_pass():
    assert found(EVAL.format(reset="preds = None")) == ["HPU005@12", "HPU005@14"]


METHOD = """
class Sampler:
    def __init__(self, table):
        self.table = table
        self.offset = None

    def step(self, x):
        if self.offset is None:
            {fill}
        {after}
        return x * self.table[0]


def run(model, sampler, x):
    for _ in range(10):
        x = sampler.step(model(x))
        htcore.mark_step()
    return x


run(torch.nn.Linear(4, 4).to("hpu"), Sampler(torch.ones(4, device="hpu")), torch.ones(4, device="hpu"))
"""


def test_an_attribute_filled_on_the_first_call_is_read_once():
    assert found(METHOD.format(fill="self.offset = self.table.sum().item()", after="pass")) == []
    assert found(METHOD.format(fill="self._init_offset()", after="pass").replace(
        "    def step", "    def _init_offset(self):\n        self.offset = self.table.sum().item()\n\n    def step")) == []


def test_an_attribute_cleared_in_the_same_method_is_read_every_call():
    assert found(METHOD.format(fill="self.offset = self.table.sum().item()", after="self.offset = None")) == ["HPU005@13"]


def test_a_test_on_something_else_is_not_a_first_pass_guard():
    src = EVAL.format(reset="pass").replace("if preds is None:", "if batch is None:")
    assert found(src) == ["HPU005@12", "HPU005@14"]


LISTS = """
def evaluate(model, loader):
    preds = []
    for batch in loader:
        logits = model(batch.to("hpu"))
        {reset}
        if {test}:
            preds.append(logits.detach().cpu().numpy())
        else:
            preds[0] = np.append(preds[0], logits.detach().cpu().numpy(), axis=0)
        htcore.mark_step()
    return preds
"""


def test_an_empty_list_filled_by_its_branch_is_filled_on_the_first_pass_only():
    assert found(LISTS.format(reset="pass", test="len(preds) == 0")) == ["HPU005@14"]
    assert found(LISTS.format(reset="pass", test="not preds")) == ["HPU005@14"]


def test_a_list_emptied_every_pass_is_filled_every_pass():
    assert found(LISTS.format(reset="preds.clear()", test="len(preds) == 0")) == ["HPU005@12", "HPU005@14"]
