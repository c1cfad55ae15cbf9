"""Loops in what forward() calls run inside that one step (hpulint/analysis/link.py).

A helper forward() calls, whose loop calls a submodule per tile, used to be taken for a function
that runs many steps (its loop "calls a model"), which also took forward() off the hot list.
"""
from __future__ import annotations

import textwrap

from hpulint import Config, lint_source

SRC = """
import torch


class Attn(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.sdpa = torch.nn.Identity()
        self.block = 128

    def tiles(self, q):
        out = []
        for i in range(q.shape[-2] // self.block):
            s, e = i * self.block, (i + 1) * self.block
            out.append(self.sdpa(q[:, s:e]))
        return torch.cat(out, 1)

    def forward(self, q):
        scale = q.abs().max().item()
        return self.tiles(q / scale)


def sample(model, x, steps):
    for i in range(steps):
        x = model(x[:, i:])
    return x
"""


def found(src: str) -> list:
    return [f"{f.code}@{f.line}" for f in lint_source(textwrap.dedent(src), path="case.py", config=Config())]


def test_a_tile_loop_in_a_helper_of_forward_is_not_a_step_loop():
    # line 15: the tile slice (not reported); line 19: forward() is still hot, so its host read
    # is reported; line 25: the sampling loop around the model is a step loop
    assert found(SRC) == ["HPU005@19", "HPU001@25"]


def test_a_tile_loop_that_marks_a_step_is_still_a_step_loop():
    marked = SRC.replace("import torch\n", "import torch\nimport habana_frameworks.torch.core as htcore\n", 1)
    marked = marked.replace("            out.append(self.sdpa(q[:, s:e]))\n",
                            "            out.append(self.sdpa(q[:, s:e]))\n            htcore.mark_step()\n")
    # forward() calls the marking tile loop, so one call runs many steps; the sampling loop still
    # calls forward() once a pass, so forward()'s own read (line 21) is one sync per sampling step
    assert found(marked) == ["HPU001@16", "HPU005@21", "HPU001@27"]
