"""A helper that returns one of its parameters (`default(val, d)`, common in diffusion code) gives
each call its own arguments back: `default(num_timesteps_cond, 1)` is an int even when other
calls of `default` pass tensors (hand-read round 4: `if self.shorten_cond_schedule:` was
reported as a branch on a tensor in four copies of a latent-diffusion model).

The cases are written for these tests; none is copied from a repository.
"""
from __future__ import annotations

import textwrap

from hpulint.engine import lint_source

MODEL = """
import torch
import torch.nn as nn


def exists(x):
    return x is not None


def default(val, d):
    if exists(val):
        return val
    return d() if callable(d) else d


class Diffusion(nn.Module):
    def __init__(self, model, num_timesteps_cond=None):
        super().__init__()
        self.model = model
        self.num_timesteps_cond = default(num_timesteps_cond, {fallback})
        self.shorten_cond_schedule = self.num_timesteps_cond > 1

    def sample(self, x):
        for i in reversed(range(10)):
            if self.shorten_cond_schedule:
                x = x + 1
            x = self.model(x)
        return x

    def q_sample(self, x_start, t=None, noise=None):
        t = default(t, torch.randint(0, 10, (x_start.shape[0],)))
        noise = default(noise, torch.randn_like(x_start))
        return x_start * t + noise
"""


def codes(src: str) -> list:
    return [(f.code, f.line) for f in lint_source(textwrap.dedent(src), "ddpm.py")]


def test_an_int_passed_through_default_stays_an_int():
    assert codes(MODEL.format(fallback="1")) == []


def test_each_call_gets_its_own_argument_back():
    src = """
    import torch

    def first(values):
        return values[0]

    def sample(model, x, sizes):
        for i in range(10):
            x = model(x)
            if first(sizes) > 2:
                x = x + 1
            if first(x) > 0:
                x = x - 1
        return x

    sample(torch.nn.Linear(4, 4), torch.ones(4), [1, 2, 3])
    """
    assert codes(src) == [("HPU008", 12)]


def test_with_an_unknown_argument_the_project_callers_decide():
    """`get_final(x)` returns `x` itself, `x.all()` or raises; called with a value the call cannot
    tell (a criteria object's result), what the project's callers pass decides: a tensor here."""
    src = """
    import torch

    def get_final(x):
        if isinstance(x, bool):
            return x
        elif torch.is_tensor(x):
            return x.all() if x.dim() > 0 else x
        raise TypeError(type(x))

    def decode(model, ids, criteria):
        first = get_final(model(ids) > 0)
        for i in range(10):
            ids = model(ids)
            if get_final(criteria(ids)):
                break
        return ids
    """
    assert codes(src) == [("HPU008", 15)]
