"""Compile kinds the twenty-fourth held-out compile set (c476-c495) showed missing or wrong, each
measured on Dynamo (torch 2.13, eager backend) before the rule was changed; a look-alike or the
hazard it must keep beside each. The cases are written for these tests, not copied from the set.
"""
from __future__ import annotations

from snippets import compile_found

# an int argument torch needs as a number to build the graph (measured: fed 2, 3, 4, 5, each of
# these compiled 4 graphs; `arange`, `eye`, `zeros`, `topk`, `roll` compiled 2)
ONE_HOT = """
import torch
import torch.nn.functional as F

CLASSES = {{"voc": 21, "city": 19, "camvid": 12}}


def loss(logits, target, num_classes):
    onehot = {op}
    return (logits.softmax(-1) - onehot).pow(2).mean()


loss_fn = torch.compile(loss)
for step in range(6):
    name = list(CLASSES)[step % 3]
    k = CLASSES[name]
    t = torch.randint(0, k, (4,))
    loss_fn(torch.randn(4, k), t, CLASSES[name])
"""


def test_an_int_that_one_hot_needs_changing_between_calls_recompiles():
    got = compile_found(ONE_HOT.format(op="F.one_hot(target, num_classes).float()"))
    assert got == [("HPU017", 18)]


def test_the_same_int_given_to_arange_is_made_dynamic():
    got = compile_found(ONE_HOT.format(op="(target[:, None] == torch.arange(num_classes)).float()"))
    assert got == []


PAIRS = """
import torch


def pair_loss(scores, labels):
    n = scores.shape[0]
    {pairs}
    return (scores[i] - scores[j] - (labels[i] - labels[j])).pow(2).mean()


loss_fn = torch.compile(pair_loss)
for n_docs in (10, 7, 12, 15, 9):
    loss_fn(torch.randn(n_docs), torch.randn(n_docs))
"""


def test_a_size_given_to_triu_indices_is_specialized():
    got = compile_found(PAIRS.format(pairs="i, j = torch.triu_indices(n, n, offset=1)"))
    assert got == [("HPU015", 7)]


def test_a_size_given_to_arange_is_not():
    got = compile_found(PAIRS.format(pairs="i = torch.arange(n); j = i.flip(0)"))
    assert got == []


# a helper's `if verbose:` print that no caller turns on: never traced
VERBOSE = """
import torch


def score(x, verbose=False):
    if verbose:
        print("energy", x.pow(2).sum())
    return x.mean()


@torch.compile
def step(x):
    return score(x{given})


for _ in range(3):
    step(torch.randn(4))
"""


def test_a_print_under_a_flag_no_caller_gives_is_not_a_break():
    assert compile_found(VERBOSE.format(given="")) == []


def test_a_print_under_a_flag_the_compiled_caller_gives_is_a_break():
    assert compile_found(VERBOSE.format(given=", verbose=True")) == [("HPU012", 7)]


# measured: `math.isqrt` of a dynamic size breaks the graph ("torch.* op returned non-Tensor") and
# specializes the size (4 sizes, 4 graphs); `int(math.sqrt(n))` is traced (2 graphs)
GRID = """
import math
import torch


@torch.compile
def grid(tokens):
    side = {side}
    return tokens.view(side, side, -1).mean(-1)


for n in (4, 9, 16, 25):
    grid(torch.ones(n, 8))
"""


def test_isqrt_of_a_size_in_a_region_fed_several_sizes():
    assert compile_found(GRID.format(side="math.isqrt(tokens.shape[0])")) == [("HPU015", 8)]


def test_int_of_sqrt_of_the_size_is_traced():
    assert compile_found(GRID.format(side="int(math.sqrt(tokens.shape[0]))")) == []


# measured: `with contextlib.redirect_stdout(io.StringIO()):` inside the compiled function breaks
# there (the function runs eagerly: 0 graphs); around the compiled call, nothing breaks
QUIET = """
import contextlib
import io
import torch


@torch.compile
def step(x):
{inside}    return x * 2


{outside}for _ in range(3):
    step(torch.randn(4))
"""


def test_redirect_stdout_inside_the_region_breaks():
    src = QUIET.format(inside="    with contextlib.redirect_stdout(io.StringIO()):\n        x = x + 1\n", outside="")
    assert compile_found(src) == [("HPU012", 9)]


def test_redirect_stdout_around_the_compiled_call_does_not():
    src = QUIET.format(inside="", outside="with contextlib.redirect_stdout(io.StringIO()):\n    pass\n")
    assert compile_found(src) == []


# measured: a compiled function given `*views`, 2, 3 or 4 of them drawn with random.choice each
# step: 3 graphs (a guard on the number of arguments); the views stacked into one tensor first: 2
VIEWS = """
import random
import torch


@torch.compile
def fuse(*views):
    return torch.stack(views).mean(0)


@torch.compile
def fuse_stacked(views):
    return views.mean(0)


random.seed(0)
for step in range(8):
    n_views = random.choice((2, 3, 4))
    views = [torch.randn(4, 8) for _ in range(n_views)]
    {call}
"""


def test_a_varying_number_of_starred_arguments_recompiles():
    assert compile_found(VIEWS.format(call="fuse(*views)")) == [("HPU017", 20)]


def test_the_same_views_stacked_before_the_call_do_not():
    assert compile_found(VIEWS.format(call="fuse_stacked(torch.stack(views))")) == []


# measured: `n in` a module-level set, n a size, 7 sizes: 7 graphs; `in` a list of the same: 3
# (equality guards, one per element the sizes hit)
TUNED = """
import torch

TUNED = {tuned}


@torch.compile
def attend(x):
    n = x.shape[0]
    if n in TUNED:
        return x * 2
    return x + 1


for n in (8, 16, 20, 32, 36, 64, 70):
    attend(torch.ones(n))
"""


def test_a_size_looked_up_in_a_set_is_specialized():
    assert compile_found(TUNED.format(tuned="{16, 32, 64}")) == [("HPU015", 10)]


def test_a_size_looked_up_in_a_list_is_not_taken_for_a_hashed_lookup():
    # (a list is compared element by element: 3 graphs for the 7 sizes, the branch's own cost,
    # bounded by the list; this kind is the hashed lookup's graph per size)
    assert compile_found(TUNED.format(tuned="[16, 32, 64]")) == []


# a size drawn each step with random.choice, given to linspace in the region: measured, 4 graphs
# (a graph per size drawn over the 8 steps); arange of the same size, 2 graphs
COORDS = """
import random
import torch


@torch.compile
def with_coords(x):
    w = x.shape[-1]
    xs = {coords}
    return x + xs


random.seed(0)
for step in range(8):
    size = random.choice((32, 40, 48, 56, 64))
    with_coords(torch.randn(2, size))
"""


def test_a_size_drawn_from_a_few_given_to_linspace_is_specialized():
    assert compile_found(COORDS.format(coords="torch.linspace(-1.0, 1.0, w)")) == [("HPU015", 9)]


def test_the_same_size_given_to_arange_is_not():
    assert compile_found(COORDS.format(coords="torch.arange(w) / w")) == []
