"""Compile kinds left missed by the twenty-fourth held-out compile set (c476-c495) and found by
the twenty-fifth, each measured on Dynamo (torch 2.13, eager backend) before the rule was changed;
a look-alike or the hazard it must keep beside each. The cases are written for these tests, not
copied from the sets.
"""
from __future__ import annotations

from snippets import compile_found

# an int the compiled function passes on to a module of the file whose forward needs it as a
# number (measured: 3 values, 3 graphs; the same int used in tensor arithmetic: 2 graphs)
DEEPER = """
import torch
import torch.nn as nn
import torch.nn.functional as F


class Up(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(4, 4 * 25, 1)

    def forward(self, x, factor):
        y = self.conv(x)[:, : 4 * factor * factor]
        return {op}


net = Up()


def loss(x, factor):
    return net(x, factor).mean()


loss_fn = torch.compile(loss)
for step in range(6):
    factor = (2, 3, 4)[step % 3]
    loss_fn(torch.randn(2, 4, 5, 5), factor)
"""


def test_an_int_passed_on_to_a_module_that_pixel_shuffles_by_it_recompiles():
    assert compile_found(DEEPER.format(op="F.pixel_shuffle(y, factor)")) == [("HPU017", 27)]


def test_the_same_int_used_in_tensor_arithmetic_one_call_deeper_is_made_dynamic():
    assert compile_found(DEEPER.format(op="y * factor")) == []


HELPER = """
import torch
import torch.nn.functional as F


def coords(h, steps):
    return torch.linspace(-1, 1, steps) * h.mean()


@torch.compile
def head(x, steps):
    return x.sum() + coords(x, steps).sum()


for step in range(6):
    head(torch.randn(4), (5, 7, 9)[step % 3])
"""


def test_an_int_passed_on_to_a_helper_function_that_gives_it_to_linspace_recompiles():
    assert compile_found(HELPER) == [("HPU017", 16)]
