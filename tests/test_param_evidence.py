"""What a parameter is, from how the function uses it (hpulint/analysis/walk_bind.py)."""
from __future__ import annotations

import textwrap

from hpulint import Config, lint_source

PATCHED = """
import torch
import habana_frameworks.torch.core as htcore
import transformers


def gaudi_model_forward(self, input_ids=None, use_cache=None):
    if self.gradient_checkpointing and self.training:
        use_cache = False
    h = self.embed(input_ids)
    if {test}:
        h = h * 2
    return self.norm(h)


transformers.models.llama.modeling_llama.LlamaModel.forward = gaudi_model_forward
"""


def found(src: str) -> list:
    return [f"{f.code}@{f.line}" for f in lint_source(textwrap.dedent(src), path="case.py", config=Config())]


def test_self_calling_a_layer_named_like_a_tensor_method_is_not_a_tensor():
    """`self.norm(h)` calls a LayerNorm: `self` (a module) stays a module, so its flags are
    Python values (a forward written as a free function to patch a library model)."""
    assert found(PATCHED.format(test="use_cache")) == []


def test_a_tensor_argument_of_the_same_forward_is_still_one():
    assert found(PATCHED.format(test="torch.isnan(h).any()")) == ["HPU008@11"]
