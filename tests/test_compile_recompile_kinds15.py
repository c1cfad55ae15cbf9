"""The fifteenth held-out set's kinds, statically (no torch): a generator handed to a compiled
function (HPU012), a list of new strings whose items it reads and a branch on an int argument taken
modulo a constant (HPU017), a Python loop over a batch whose size changes (HPU015). Each kind was
measured on torch 2.13 (the fixtures in fixtures/HPU012, HPU015 and HPU017 carry the counts)."""
from __future__ import annotations

from textwrap import dedent

import pytest

from hpulint import Config, lint_source

COMPILE = ("HPU012", "HPU013", "HPU014", "HPU015", "HPU016", "HPU017")


def found(src: str) -> list:
    return [(f.code, f.line) for f in lint_source(dedent(src), "t.py", Config()) if f.code in COMPILE]


def messages(src: str) -> list:
    return [f.message for f in lint_source(dedent(src), "t.py", Config()) if f.code in COMPILE]


GENERATOR = """\
import torch

weight = torch.randn(8, 8)


def denoise_step(x, sigma, generator=None):
    noise = torch.randn(x.shape, generator=generator)
    return x @ weight + sigma * noise


{compile}


def sample(seed):
    {make}
    x = torch.randn(2, 8)
    for sigma in torch.linspace(1.0, 0.1, 4):
        x = step({args})
    return x
"""


@pytest.mark.parametrize("compile_line, make, args, expected", [
    # a seeded generator passed by position, by keyword, or made in the call
    ("step = torch.compile(denoise_step)", "gen = torch.Generator().manual_seed(seed)", "x, sigma, gen",
     [("HPU012", 7)]),
    ("step = torch.compile(denoise_step)", "gen = torch.Generator()", "x, sigma, generator=gen", [("HPU012", 7)]),
    ("step = torch.compile(denoise_step)", "pass", "x, sigma, torch.Generator().manual_seed(seed)",
     [("HPU012", 7)]),
    # the parameter left at None, given None, or given something that is not a generator
    ("step = torch.compile(denoise_step)", "gen = torch.Generator().manual_seed(seed)", "x, sigma", []),
    ("step = torch.compile(denoise_step)", "gen = torch.Generator()", "x, sigma, None", []),
    ("step = torch.compile(denoise_step)", "gen = seed", "x, sigma, gen", []),
    # the function called eagerly, not through the compiled callable
    ("step = denoise_step", "gen = torch.Generator().manual_seed(seed)", "x, sigma, gen", []),
])
def test_generator_passed_to_a_compiled_function(compile_line, make, args, expected):
    assert found(GENERATOR.format(compile=compile_line, make=make, args=args)) == expected


def test_generator_message_names_the_parameter():
    src = GENERATOR.format(compile="step = torch.compile(denoise_step)",
                           make="gen = torch.Generator().manual_seed(seed)", args="x, sigma, gen")
    assert messages(src)[0].startswith("`randn(..., generator=generator)` (a `torch.Generator` the caller passes) "
                                       "in denoise_step()")


def test_generator_given_to_a_decorated_function():
    src = """\
    import torch

    gen = torch.Generator().manual_seed(0)


    @torch.compile
    def noisy(x, g):
        return x + torch.rand(x.shape, generator=g)


    for _ in range(3):
        noisy(torch.randn(4), gen)
    """
    assert found(src) == [("HPU012", 8)]


IDS = """\
import torch
import torch.nn as nn
import torch.nn.functional as F

model = nn.Linear(8, 4)


@torch.compile
def step(batch):
    per_sample = F.cross_entropy(model(batch["x"]), batch["y"], reduction="none")
    return {ret}


for i in {loop}:
    batch = {{"x": torch.randn(4, 8), "y": torch.randint(0, 4, (4,)),
             "ids": {ids}}}
    out = step(batch)
"""


@pytest.mark.parametrize("ret, loop, ids, expected", [
    # the ids read (zip, a comprehension, an index), new every batch: a recompile per batch
    ('per_sample.mean(), dict(zip(batch["ids"], per_sample))', "range(10)",
     '[f"img_{4 * i + j:05d}" for j in range(4)]', [("HPU017", 17)]),
    ('{k: v for k, v in zip(batch["ids"], per_sample)}', "range(100)", '[f"s{i}_{j}" for j in range(4)]',
     [("HPU017", 17)]),
    ('(per_sample.mean(), batch["ids"][0])', "range(10)", '["a" + str(i), "b" + str(i)]', [("HPU017", 17)]),
    ('per_sample.mean(), dict(zip(batch["ids"], per_sample))', "range(5)",
     '[f"img_{4 * i + j:05d}" for j in range(4)]', [("HPU017", 17)]),  # 5 passes: 4 recompiles
    # only the length read, the ids not read, the same ids every batch, or two batches
    ('per_sample.sum() / len(batch["ids"])', "range(10)", '[f"img_{4 * i + j}" for j in range(4)]', []),
    ("per_sample.mean(), per_sample", "range(10)", '[f"img_{4 * i + j}" for j in range(4)]', []),
    ('per_sample.mean(), dict(zip(batch["ids"], per_sample))', "range(10)", '[f"img_{j}" for j in range(4)]', []),
    ('per_sample.mean(), dict(zip(batch["ids"], per_sample))', "range(2)", '[f"img_{4 * i + j}" for j in range(4)]',
     []),
])
def test_string_ids_read_by_the_compiled_step(ret, loop, ids, expected):
    assert found(IDS.format(ret=ret, loop=loop, ids=ids)) == expected


def test_string_ids_as_a_list_argument():
    src = """\
    import torch


    def score(x, names):
        return {name: row.sum() for name, row in zip(names, x)}


    score_fn = torch.compile(score)
    for step in range(20):
        names = [f"doc{step}-{k}" for k in range(3)]
        score_fn(torch.randn(3, 4), names)
    """
    assert found(src) == [("HPU017", 11)]


EMA = """\
import copy

import torch
import torch.nn as nn

EMA_EVERY = 4
student = nn.Linear(16, 16)
teacher = copy.deepcopy(student).requires_grad_(False)


@torch.compile
def update_teacher(step):
    if {test}:
        return
    with torch.no_grad():
        for pt, ps in zip(teacher.parameters(), student.parameters()):
            pt.lerp_(ps, 0.01)


for step in {loop}:
    update_teacher(step)
"""


@pytest.mark.parametrize("test, loop, expected", [
    ("step % EMA_EVERY != 0", "range(12)", [("HPU017", 13)]),  # measured: 3 graphs, 2 recompiles
    ("step % 4 == 1", "range(12)", [("HPU017", 13)]),
    ("0 != step % EMA_EVERY", "range(100)", [("HPU017", 13)]),
    ("step % EMA_EVERY != 0", "range(0, 48, 4)", []),  # every value on one side: 2 graphs (measured)
    ("step % EMA_EVERY != 0", "[0, 4, 8, 12]", []),
    ("step % EMA_EVERY != 0", "range(1)", []),  # one value
    ("step % every != 0", "range(12)", []),  # the modulus is not known
])
def test_branch_on_the_step_modulo_a_constant(test, loop, expected):
    assert found(EMA.format(test=test, loop=loop)) == expected


def test_modulus_rebound_at_module_level_is_not_a_constant():
    src = EMA.format(test="step % EMA_EVERY != 0", loop="range(12)").replace(
        "EMA_EVERY = 4\n", "EMA_EVERY = 4\nEMA_EVERY = int(EMA_EVERY)\n")
    assert found(src) == []


TRIPLET = """\
import random

import torch
import torch.nn.functional as F

embedder = torch.nn.Linear(64, 16)


def batch_hard(emb, labels):
    dist = torch.cdist(emb, emb)
    losses = []
    {loop}
        same = labels == label
        losses.append(F.relu(anchor.masked_fill(~same, 0.0).max() - anchor.masked_fill(same, 9.0).min()))
    return torch.stack(losses).mean()


loss_fn = torch.compile(batch_hard)
for step in range({steps}):
    {size}
    labels = torch.arange(n_ids).repeat_interleave(2)
    emb = F.normalize(embedder(torch.randn(labels.numel(), 64)), dim=-1)
    loss_fn(emb, labels)
"""


@pytest.mark.parametrize("loop, size, steps, expected", [
    ("for anchor, label in zip(dist, labels):", "n_ids = random.randint(3, 8)", 10, [("HPU015", 23)]),
    ("for anchor, label in zip(dist, labels):", "n_ids = random.choice([2, 4, 6, 8])", 10, [("HPU015", 23)]),
    ("for anchor, label in zip(dist, labels):", "n_ids = 3 + step", 10, [("HPU015", 23)]),
    ("for i in range(labels.shape[0]):\n        anchor, label = dist[i], labels[i]", "n_ids = 3 + step", 10,
     [("HPU015", 24)]),
    ("for i in range(len(labels)):\n        anchor, label = dist[i], labels[i]", "n_ids = 3 + step", 10,
     [("HPU015", 24)]),
    # one size, two sizes, or a size that does not change
    ("for anchor, label in zip(dist, labels):", "n_ids = random.randint(3, 4)", 10, []),
    ("for anchor, label in zip(dist, labels):", "n_ids = 6", 10, []),
    ("for anchor, label in zip(dist, labels):", "n_ids = 3 + step", 2, []),
])
def test_python_loop_over_a_batch_of_changing_size(loop, size, steps, expected):
    assert found(TRIPLET.format(loop=loop, size=size, steps=steps)) == expected


@pytest.mark.parametrize("body, shape, expected", [
    ("for row in x:\n        out.append(row.norm())", "4 + step, 8", [("HPU015", 13)]),
    ("for row in x.unbind(0):\n        out.append(row.norm())", "4 + step, 8", [("HPU015", 13)]),
    ("for i, row in enumerate(x):\n        out.append(row.norm() * i)", "4 + step, 8", [("HPU015", 13)]),
    ("out = [row.norm() for row in x]", "4 + step, 8", [("HPU015", 12)]),
    # the loop's length fixed, another dimension changing: 2 graphs (measured)
    ("for row in x:\n        out.append(row.norm())", "4, 8 + step", []),
    # no Python loop over the tensor
    ("out = [x.norm(dim=1)]", "4 + step, 8", []),
])
def test_python_loop_over_a_tensor_argument(body, shape, expected):
    src = f"""\
import torch


@torch.compile
def row_norms(x):
    out = []
    {body}
    return torch.stack(out)


for step in range(10):
    row_norms(torch.randn({shape}))
"""
    assert found(src) == expected
