"""A project module swapped into a compiled model with `setattr` (quantization, LoRA injection) runs
inside the compiled region: its forward's graph breaks are the model's. Measured on torch 2.13 (CPU,
`eager` backend, TORCH_LOGS=graph_breaks): the snippet below, compiled, breaks at its `.item()` line
on each of 3 calls (2 unique graphs); without `torch.compile` nothing is compiled."""
from __future__ import annotations

from snippets import compile_found as found

SWAPPED = """\
import torch
import torch.nn as nn


class Clamped(nn.Module):
    def __init__(self, linear):
        super().__init__()
        self.linear = linear

    def forward(self, x):
        y = self.linear(x)
        if y.abs().max().item() > 100.0:
            y = y / 100.0
        return y


def wrap_linears(model):
    for name, mod in model.named_children():
        if isinstance(mod, nn.Linear):
            setattr(model, name, Clamped(mod))


model = nn.Sequential(nn.Linear(8, 8), nn.ReLU(), nn.Linear(8, 2))
wrap_linears(model)
cmodel = {COMPILED}
for _ in range(3):
    out = cmodel(torch.randn(4, 8))
"""


def test_a_module_swapped_into_a_compiled_model_breaks_its_graph():
    assert found(SWAPPED.replace("{COMPILED}", 'torch.compile(model, backend="eager")')) == [("HPU012", 12)]


def test_the_same_swap_in_a_model_nothing_compiles_is_quiet():
    assert found(SWAPPED.replace("{COMPILED}", "model")) == []
