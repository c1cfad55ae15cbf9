"""Token decoding as LLM reference code writes it: the position of the previous pass carried into
the model call, a KV cache written at that position two module levels down (blocks appended to a
ModuleList), and a stop test that iterates the device flags with `all()`. Each case has a
look-alike that must stay quiet.

The cases are written for these tests; none is copied from a repository.
"""
from __future__ import annotations

import textwrap

from hpulint.engine import lint_source


def found(src: str, select: tuple = ()) -> list:
    out = [(f.code, f.line) for f in lint_source(textwrap.dedent(src), "decode.py")]
    return [x for x in out if not select or x[0] in select]


DECODER = """
import torch
import habana_frameworks.torch.core as htcore


class Attention(torch.nn.Module):
    def __init__(self, dim, max_len):
        super().__init__()
        self.proj = torch.nn.Linear(dim, dim)
        self.cache = torch.zeros(1, max_len, dim, device="hpu")

    def forward(self, x, pos):
        n = x.shape[1]
        self.cache[:, pos : pos + n] = self.proj(x)
        return self.cache[:, : pos + n].mean(1, keepdim=True)


class Block(torch.nn.Module):
    def __init__(self, dim, max_len):
        super().__init__()
        self.attn = Attention(dim, max_len)

    def forward(self, x, pos):
        return x + self.attn(x, pos)


class Decoder(torch.nn.Module):
    def __init__(self, dim, depth, max_len):
        super().__init__()
        self.blocks = torch.nn.ModuleList()
        for _ in range(depth):
            self.blocks.append(Block(dim, max_len))

    def forward(self, x, pos):
        for block in self.blocks:
            x = block(x, pos)
        return x


def generate(model, x, total):
    last = 0
    finished = torch.zeros(x.shape[0], dtype=torch.bool, device="hpu")
    for cur in range(1, total):
        out = model(x, last)
        finished |= out.sum(-1).squeeze(-1) > 0
        htcore.mark_step()
        last = cur
        if {STOP}:
            break
    return x


generate(Decoder(8, 2, 64), torch.randn(2, 64, 8), 64)
"""


def test_the_previous_position_reaches_the_cache_write_two_modules_down():
    got = found(DECODER.replace("{STOP}", "all(finished)"), ("HPU001",))
    # `last` is the last pass's `cur`: the cache slices in Attention.forward (called through
    # the blocks appended to the ModuleList) get a new bound every token
    assert ("HPU001", 14) in got and ("HPU001", 15) in got


def test_all_over_device_flags_is_a_host_read_every_token():
    assert found(DECODER.replace("{STOP}", "all(finished)"), ("HPU008",)) == [("HPU008", 48)]


def test_all_over_a_python_list_is_not():
    src = DECODER.replace("{STOP}", "all(done)").replace("    last = 0\n", "    last = 0\n    done = [False]\n")
    assert found(src, ("HPU008",)) == []


def test_a_position_fixed_for_the_whole_loop_is_not_a_counter():
    # the same model call with a position set once before the loop: one graph
    src = DECODER.replace("{STOP}", "False").replace("        last = cur\n", "")
    assert found(src, ("HPU001",)) == []


PROMPTS = """
import torch
import habana_frameworks.torch.core as htcore
from transformers import AutoModelForCausalLM


def run(prompts, tokenizer):
    model = AutoModelForCausalLM.from_pretrained("gpt2").to("hpu")
    texts = []
    for batch in prompts:
        ids = tokenizer(batch, return_tensors="pt").input_ids.to("hpu")
        {LINE}
        htcore.mark_step()
        texts.append(tokenizer.batch_decode(out.tolist()))
    return texts
"""


def test_the_tokens_of_a_whole_generate_run_are_read_once_per_run():
    # each pass runs a whole decoding (its steps are inside generate()): the copy of its
    # result is once per run
    src = PROMPTS.replace("{LINE}", "out = model.generate(ids, max_new_tokens=20).cpu()")
    assert found(src, ("HPU005",)) == []


def test_a_single_forward_read_every_pass_is_a_host_read_per_step():
    src = PROMPTS.replace("{LINE}", "out = model(ids).logits.argmax(-1).cpu()")
    assert found(src, ("HPU005",)) == [("HPU005", 12)]


FORWARD = """
import torch


class Attention(torch.nn.Module):
    def __init__(self, processor):
        super().__init__()
        self.processor = processor
        self.scale = torch.nn.Parameter(torch.ones(1))

    def forward(self, x: torch.Tensor, **kwargs):
        unused = [k for k in kwargs if k != "mask"]
        if len(unused) > 0:
            print(f"{unused} are ignored for a {x.__class__.__name__}")
        print(f"scale {self.scale}")
        return self.processor(x) * self.scale
"""


def test_a_class_name_in_a_message_is_not_a_tensor():
    # `x.__class__.__name__` is Python's own attribute of the tensor, not a tensor
    assert found(FORWARD, ("HPU005",)) == [("HPU005", 15)]
