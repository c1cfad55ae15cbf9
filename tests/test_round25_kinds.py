"""Kinds found wrong in round 25 (hand-read samples and the twenty-fourth held-out set), once
read. Each has a look-alike, or the hazard it must keep, beside it.

The cases are written for these tests; none is copied from a repository.
"""
from __future__ import annotations

from snippets import found

# a causal video layer run chunk by chunk: it joins what it kept from the last chunk to the new
# one, then keeps only the last frames of the result for the next call
CAUSAL = """
import torch
from torch import nn


class CausalUpsample(nn.Module):
    def __init__(self, n):
        super().__init__()
        self.n = n
        self.first = True
        self.frame_cache = None

    def forward(self, x):
        if not self.first:
            x = torch.cat([self.frame_cache, x], dim=2)
            self.frame_cache = x[:, :, {kept}].clone()
        else:
            self.frame_cache = x[:, :, -self.n:].clone()
        self.first = False
        return x
"""


def test_a_cache_cut_back_to_its_last_frames_every_call_does_not_grow():
    assert found(CAUSAL.format(kept="-2 * self.n:-self.n"), ("HPU003",)) == []
    assert found(CAUSAL.format(kept="-1:"), ("HPU003",)) == []


def test_a_cache_that_keeps_everything_it_joined_grows_every_call():
    assert found(CAUSAL.format(kept=":"), ("HPU003",)) == [("HPU003", 15)]
