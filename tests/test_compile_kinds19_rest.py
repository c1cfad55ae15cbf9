"""Two of the kinds the nineteenth held-out set's rule changes left, statically (no torch): a string
built from an int argument the calls change, in the compiled region (HPU012: a graph break once the
int is dynamic), and a branch on a size taken modulo a constant, fed listed sizes on both sides of
the test (HPU015). Each snippet here, bad and look-alike, was measured on torch 2.13 (CPU, `eager`
backend, TORCH_LOGS=graph_breaks,recompiles): the counts are in the comments."""
from __future__ import annotations

import snippets
from snippets import compile_found as found, compile_messages as messages


def quiet(src: str) -> list:
    return snippets.found(src)  # every code: nothing at all


HEAD_BY_NAME = """\
import torch
import torch.nn as nn


class Heads(nn.Module):
    def __init__(self):
        super().__init__()
        for i in range(3):
            self.add_module(f"out_{i}", nn.Linear(8, 2))

    def forward(self, x, which):
        return getattr(self, f"out_{which}")(x)


model = torch.compile(Heads())
for step in range(6):
    model(torch.randn(4, 8), step % 3)
"""
# measured: 1 graph, a break at line 12 (BUILD_STRING of the dynamic int), 1 recompile (the int made dynamic)

HEAD_BY_STR = HEAD_BY_NAME.replace('f"out_{which}"', '"out_" + str(which)')
# measured: 4 graphs, a break at line 12, 3 recompiles (guard line 12)
HEAD_BY_FORMAT = HEAD_BY_NAME.replace('f"out_{which}"', '"out_{}".format(which)')
# measured: 2 graphs, a break at line 12, 1 recompile

# the same model given the same head every call
HEAD_FIXED = HEAD_BY_NAME.replace("step % 3)", "1)")
# measured: 1 graph, no break

TAG_FROM_LISTED_INTS = """\
import torch


@torch.compile(backend="eager")
def f(x, k):
    tag = f"layer{k}"
    return x * len(tag)


for k in [1, 2, 3, 4]:
    f(torch.randn(4), k)
"""
# measured: 1 graph, a break at line 6, 1 recompile

PAD_IF_NOT_MULTIPLE = """\
import torch
import torch.nn.functional as F


@torch.compile(backend="eager")
def pooled(x):
    n = x.shape[0]
    if n % 8:
        x = F.pad(x, (0, 0, 0, 8 - n % 8))
    return x.view(-1, 8, x.shape[1]).mean(1)


for n in [16, 13, 24, 20, 32]:
    pooled(torch.randn(n, 4))
"""
# measured: 3 graphs, 2 recompiles (guard line 8, `Mod(s0, 8) != 0`)

PAD_IF_NOT_MULTIPLE_NE = PAD_IF_NOT_MULTIPLE.replace("if n % 8:", "if n % 8 != 0:")
# measured: 3 graphs, 2 recompiles (guard line 8)

# the sizes all multiples of 8: every call on one side of the test
PAD_BUCKETED = PAD_IF_NOT_MULTIPLE.replace("[16, 13, 24, 20, 32]", "[16, 24, 40, 32]")
# measured: 2 graphs, 1 recompile (the size made dynamic)

PAD_IN_HELPER = """\
import torch
import torch.nn as nn
import torch.nn.functional as F

BLOCK, DIM = 8, 16


def pad_to_block(frames):
    n = frames.shape[1]
    if n % BLOCK:
        frames = F.pad(frames, (0, 0, 0, BLOCK - n % BLOCK))
    return frames


class Enc(nn.Module):
    def __init__(self):
        super().__init__()
        self.inp = nn.Linear(4, DIM)

    def forward(self, feats):
        x = pad_to_block(self.inp(feats))
        return x.view(x.shape[0], -1, BLOCK, DIM).mean(2)


enc = torch.compile(Enc())
for frames in [32, 27, 40, 19]:
    enc(torch.randn(2, frames, 4))
"""
# measured: 3 graphs, 2 recompiles (guard line 10, in the helper)

# always padded by (-n) % BLOCK: no branch
PAD_ALWAYS = PAD_IN_HELPER.replace("""    if n % BLOCK:
        frames = F.pad(frames, (0, 0, 0, BLOCK - n % BLOCK))
    return frames""", """    return F.pad(frames, (0, 0, 0, (-n) % BLOCK))""")
# measured: 2 graphs, 1 recompile


def test_string_of_a_changing_int_argument():
    assert found(HEAD_BY_NAME) == [("HPU012", 12)]
    assert "BUILD_STRING" in messages(HEAD_BY_NAME)[0]
    assert found(HEAD_BY_STR) == [("HPU012", 12)]
    assert found(HEAD_BY_FORMAT) == [("HPU012", 12)]
    assert found(TAG_FROM_LISTED_INTS) == [("HPU012", 6)]
    assert quiet(HEAD_FIXED) == []


def test_branch_on_a_size_modulo_a_constant():
    assert found(PAD_IF_NOT_MULTIPLE) == [("HPU015", 14)]  # at the call, as HPU015's other sizes
    assert "the branch on `n % 8` in pooled()" in messages(PAD_IF_NOT_MULTIPLE)[0]
    assert "(3 graphs, not 2)" in messages(PAD_IF_NOT_MULTIPLE)[0]
    assert found(PAD_IF_NOT_MULTIPLE_NE) == [("HPU015", 14)]
    assert found(PAD_IN_HELPER) == [("HPU015", 27)]
    assert quiet(PAD_BUCKETED) == []
    assert quiet(PAD_ALWAYS) == []
