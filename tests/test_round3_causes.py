"""The causes of the round-3 hand read (tests/data/hand_read/README.md, "Round 3"), one group
per cause: each look-alike (quiet) has a hazard twin of the same shape (reported), so a fix
cannot simply silence the rule.

The cases are written for these tests; none is copied from a repository.
"""
from __future__ import annotations

import textwrap

import pytest

from hpulint import Config, lint_source

HEAD = """
import numpy as np
import torch
import habana_frameworks.torch.core as htcore
from einops import rearrange
from PIL import Image
"""


def found(src: str) -> list:
    src = textwrap.dedent(HEAD) + textwrap.dedent(src)
    return [f"{f.code}@{f.line}" for f in lint_source(src, path="case.py", config=Config())]


CASES = {
    # --- a branch that runs on one pass of the step loop (Megatron's prefill) ---------------
    "a slice under `counter == 0` runs on the first decoding pass only; the else branch every pass": (
        """
        def decode(model, tokens: torch.Tensor, start: int, stop: int):
            counter = 0
            pos = start
            while pos < stop:
                if counter == 0:
                    ids = tokens[:, :pos]
                else:
                    ids = tokens[:, pos - 1]
                out = model(ids)
                tokens[:, pos] = out.argmax(-1)
                pos += 1
                counter += 1
            return tokens
        """,
        ["HPU001@15", "HPU001@17"],
    ),
    "`i == 0` on the counter of a loop inside the step pins nothing across steps": (
        """
        def train(model, batches: torch.Tensor, n: int):
            for step in range(n):
                for j in range(2):
                    if j == 0:
                        x = batches[step]
                        model(x)
                htcore.mark_step()
        """,
        ["HPU001@12"],
    ),
    "an interval test (`i % k == 0`) is not one pass": (
        """
        def sample(model, xs: torch.Tensor, n: int):
            for i in range(n):
                if i % 10 == 0:
                    model(xs[:, :i])
                htcore.mark_step()
        """,
        ["HPU001@11"],
    ),
    "a legacy CUDA tensor constructor makes a device tensor": (
        """
        def run(model, ids: list, n: int):
            tokens = torch.cuda.LongTensor(ids)
            for i in range(n):
                last = tokens[:, i].view(-1, 1)
                model(last)
        """,
        ["HPU001@11"],
    ),
    # --- a tokenizer's ids are CPU tensors ---------------------------------------------------
    "torch.equal on tokenizer ids in a loop over the text encoders is host work": (
        """
        def encode(prompts, tokenizers, encoders):
            embeds = []
            for prompt, tokenizer, encoder in zip(prompts, tokenizers, encoders):
                ids = tokenizer(prompt, padding="max_length", return_tensors="pt").input_ids
                full = tokenizer(prompt, padding="longest", return_tensors="pt").input_ids
                if full.shape[-1] >= ids.shape[-1] and not torch.equal(ids, full):
                    print("truncated")
                embeds.append(encoder(ids.to("hpu")))
            return embeds
        """,
        [],
    ),
    "the same check through a pipeline's tokenizer attribute": (
        """
        class Pipe(torch.nn.Module):
            def forward(self, prompt):
                ids = self.tokenizer_2(prompt, return_tensors="pt").input_ids
                full = self.tokenizer_2(prompt, padding="longest", return_tensors="pt").input_ids
                if not torch.equal(ids, full):
                    print("truncated")
                return self.text_encoder(ids.to("hpu"))
        """,
        [],
    ),
    "ids moved to the device and compared every decoding step are reported": (
        """
        def generate(model, tokenizer, prompt, stop, n: int):
            ids = tokenizer(prompt, return_tensors="pt").input_ids.to("hpu")
            for _ in range(n):
                ids = torch.cat([ids, model(ids).argmax(-1)[:, -1:]], dim=-1)
                if torch.equal(ids[:, -1:], stop):
                    break
                htcore.mark_step()
            return ids
        """,
        ["HPU003@11", "HPU002@12"],
    ),
    # --- torch's getters return settings, not tensors --------------------------------------
    "a dtype from torch.get_autocast_gpu_dtype() in a warning f-string": (
        """
        class Attn(torch.nn.Module):
            def forward(self, q):
                if q.dtype == torch.float32:
                    if torch.is_autocast_enabled():
                        target = torch.get_autocast_gpu_dtype()
                    else:
                        target = self.proj.weight.dtype
                    print(f"casting back to {target}")
                    q = q.to(target)
                return self.proj(q)
        """,
        [],
    ),
    "a tensor in the same f-string is reported": (
        """
        class Attn(torch.nn.Module):
            def forward(self, q):
                scale = torch.amax(q)
                print(f"largest input {scale}")
                return self.proj(q)
        """,
        ["HPU005@11"],
    ),
}


@pytest.mark.parametrize("name", list(CASES))
def test_case(name):
    src, expected = CASES[name]
    assert found(src) == expected
