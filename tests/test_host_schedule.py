"""A schedule a class keeps on the host on purpose (`self.sigmas = sigmas.to("cpu")`, diffusers'
schedulers): comparisons on its elements are host work (no HPU008), while reading it at a
per-step counter still puts a new constant into the graph every step (HPU001)."""
from __future__ import annotations

import textwrap

from hpulint import Config, lint_source

SRC = """
import torch
import habana_frameworks.torch.core as htcore


class Scheduler:
    def __init__(self, n):
        self.sigmas = torch.linspace(1.0, 0.0, n)
        self._step_index = None

    def set_timesteps(self, n, device):
        sigmas = torch.linspace(1.0, 0.0, n + 1)
        self.sigmas = sigmas{placement}

    def step(self, out, x):
        if self._step_index is None:
            self._step_index = 0
        sigma = self.sigmas[self._step_index]
        gamma = 0.5 if sigma > 0.1 else 0.0
        self._step_index += 1
        return x - out * sigma * (1 + gamma)


def sample(model, x, n):
    sched = Scheduler(n)
    sched.set_timesteps(n, "hpu")
    for _ in range(n):
        x = sched.step(model(x), x)
        htcore.mark_step()
    return x
"""


def found(placement: str) -> list:
    src = textwrap.dedent(SRC.format(placement=placement))
    return [f"{f.code}@{f.line}" for f in lint_source(src, path="case.py", config=Config())]


def test_a_schedule_kept_on_the_host_is_compared_on_the_host_but_still_read_per_step():
    assert found('.to("cpu")') == ["HPU001@18"]


def test_the_same_schedule_on_the_device_is_also_a_host_read_each_step():
    assert found(".to(device)") == ["HPU001@18", "HPU008@19"]
