"""The fourteenth held-out set's recompile kinds, statically (no torch). Each kind was measured on
torch 2.13 (fixtures in fixtures/HPU017 carry the counts)."""
from __future__ import annotations

from textwrap import dedent

import pytest

from hpulint import Config, lint_source

COMPILE = ("HPU012", "HPU013", "HPU014", "HPU015", "HPU016", "HPU017")


def found(src: str) -> list:
    return [(f.code, f.line) for f in lint_source(dedent(src), "t.py", Config()) if f.code in COMPILE]


GRAD = """\
import torch
import torch.nn as nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(8, 8)

    def forward(self, x):
        return self.lin(x)


model = torch.compile(Net())


{deco}
def evaluate():
    with {eval_cm}:
        return model(torch.randn(2, 8))


for step in range(4):
    with {roll_cm}:
        model(torch.randn(2, 8))
    model(torch.randn(2, 8)).sum().backward()
    evaluate()
"""


@pytest.mark.parametrize("deco, eval_cm, roll_cm, expected", [
    ("", "torch.inference_mode()", "torch.no_grad()", [("HPU017", 14)]),  # grad, no_grad, inference: 2 recompiles
    ("@torch.inference_mode()", "torch.autocast('cpu', enabled=False)", "torch.set_grad_enabled(False)",
     [("HPU017", 14)]),
    ("", "torch.no_grad()", "torch.set_grad_enabled(False)", []),  # one no_grad state: 1 recompile
    ("", "torch.inference_mode(False)", "torch.no_grad()", []),  # inference_mode(False): grad on
    ("", "torch.inference_mode()", "torch.set_grad_enabled(flag)", []),  # not known
])
def test_grad_modes_around_the_calls(deco, eval_cm, roll_cm, expected):
    assert found(GRAD.format(deco=deco, eval_cm=eval_cm, roll_cm=roll_cm)) == expected


HEADS = """\
import torch
import torch.nn as nn


class Head(nn.Module):
    def __init__(self, width, out, depth, scale=1.0):
        super().__init__()
        self.layers = nn.ModuleList(nn.Linear(width, width) for _ in range(depth))
        self.out = nn.Linear(width, out)
        self.scale = scale

    def forward(self, x):
        for layer in self.layers:
            x = torch.relu(layer(x))
        return self.out(x) * self.scale


TASKS = {tasks}
heads = nn.ModuleDict({{task: Head(8, out, depth) for task, (out, depth) in TASKS.items()}})
{compile_line}
"""


@pytest.mark.parametrize("tasks, compile_line, expected", [
    # 4 (out, depth) pairs: 4 graphs, 3 recompiles
    ('{"seg": (19, 3), "depth": (1, 2), "normals": (3, 1), "edges": (1, 4)}',
     "compiled = {task: torch.compile(head) for task, head in heads.items()}", [("HPU016", 20)]),
    ('{"seg": (19, 3), "depth": (1, 2), "normals": (3, 1)}',
     "compiled = [torch.compile(h) for h in heads.values()]", [("HPU016", 20)]),
    ('{"a": (4, 2), "b": (4, 2), "c": (4, 2)}',  # one structure: one graph
     "compiled = {task: torch.compile(head) for task, head in heads.items()}", []),
    ('{"seg": (19, 3), "depth": (1, 2)}',  # two structures: one recompile, not reported
     "compiled = {task: torch.compile(head) for task, head in heads.items()}", []),
    ('{"seg": (19, 3), "depth": (1, 2), "normals": (3, 1)}',  # the parent compiled once
     "compiled = torch.compile(heads)", []),
])
def test_instances_of_one_class_compiled_each(tasks, compile_line, expected):
    assert found(HEADS.format(tasks=tasks, compile_line=compile_line)) == expected


def test_instances_from_a_literal_list_compiled_in_a_loop():
    src = HEADS.format(tasks="{}", compile_line="") + dedent("""\
        branches = [Head(8, 4, 1), Head(8, 4, 2), Head(8, 2, 2)]
        for branch in branches:
            branch.compile()
        same = [Head(8, 4, 1, scale=0.5), Head(8, 4, 1, scale=2.0), Head(8, 4, 1, scale=3.0)]
        for branch in same:
            branch.compile()
        """)
    assert found(src) == [("HPU016", 23)]


HOOKED = """\
import torch
import torch.nn as nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.layers = nn.ModuleList(nn.Linear(8, 8) for _ in range(2))

    def forward(self, x):
        for layer in self.layers:
            x = layer(x)
        return x


def show(module, inputs, output):
    pass


model = Net()
compiled = torch.compile(model)
{before}
for epoch in range({epochs}):
    {register}
    for step in range(2):
        compiled(torch.randn(2, 8))
"""


@pytest.mark.parametrize("before, epochs, register, expected", [
    ("", 5, "model.layers[-1].register_forward_hook(show)", [("HPU016", 26)]),  # 5 graphs, 4 recompiles
    ("", 5, "model.layers[-1].register_forward_pre_hook(show)", [("HPU016", 26)]),
    ("", 2, "model.layers[-1].register_forward_hook(show)", []),  # two passes: one recompile
    ("model.layers[-1].register_forward_hook(show)", 5, "pass", []),  # once, before the loop
    ("", 5, "compiled.register_forward_hook(show)", []),  # the compiled module's own hooks: outside the graph
])
def test_hook_added_on_every_pass(before, epochs, register, expected):
    assert found(HOOKED.format(before=before, epochs=epochs, register=register)) == expected


LAMBDA = """\
import torch

scale = 2


@torch.compile
def step(x, reduce):
    return reduce(x * 2)


for batch in range({passes}):
    x = torch.randn(8)
    {count}
    step(x, {arg})
"""


@pytest.mark.parametrize("passes, count, arg, expected", [
    (5, "n = int((x > 0).sum())", "lambda t: t.sum() / n", [("HPU017", 14)]),  # a global by value: 4 recompiles
    (5, "n = len(x) + batch", "lambda t: t.sum() / n", [("HPU017", 14)]),
    (5, "fn = lambda t: t.sum() / (batch + 1)", "fn", [("HPU017", 14)]),
    (2, "n = int((x > 0).sum())", "lambda t: t.sum() / n", []),  # two passes: one recompile
    (5, "n = float((x > 0).sum())", "lambda t: t.sum() / n", []),  # a float: not counted here
    (5, "n = int((x > 0).sum())", "lambda t: t.sum() / scale", []),  # a global the loop does not change
    (5, "n = int((x > 0).sum())", "n", []),  # an int argument: made dynamic
])
def test_module_level_lambda_reading_a_changing_global(passes, count, arg, expected):
    assert found(LAMBDA.format(passes=passes, count=count, arg=arg)) == expected


def test_lambda_in_a_function_closes_over_a_local():
    src = dedent("""\
        import torch


        @torch.compile
        def step(x, reduce):
            return reduce(x * 2)


        def train():
            for batch in range(5):
                x = torch.randn(8)
                n = int((x > 0).sum())
                step(x, lambda t: t.sum() / n)
        """)
    assert found(src) == []
