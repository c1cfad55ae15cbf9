"""Decoding and training loops as large code bases write them (the second held-out set's misses,
read after it became a development set): a model called through `self(...)` in a generation
mixin, a forward helper that walks micro-batches, a step split into gradient-accumulation parts,
an optional `torch.compile` of a helper, DeepSpeed's accelerator constructors, beam-search
accumulators re-gathered each step, a decoding helper that extends the caller's dict, a Python
number read once before the loop, membership tests on a tensor, and a custom autograd
`Function`'s backward.

The cases are written for these tests; none is copied from a repository.
"""
from __future__ import annotations

import textwrap

from hpulint.engine import lint_source


def found(src: str, select: tuple = ()) -> list:
    out = [(f.code, f.line) for f in lint_source(textwrap.dedent(src), "gen.py")]
    return [x for x in out if not select or x[0] in select]


MIXIN = """
import torch
import torch.nn as nn


class GenerationMixin:
    def sample(self, input_ids, steps):
        done = False
        while not done:
            logits = self(input_ids)
            nxt = logits[:, -1].argmax(-1)
            input_ids = torch.cat([input_ids, nxt[:, None]], dim=-1)
            done = input_ids.shape[1] > steps
        return input_ids


class Model(nn.Module{mixin}):
    def forward(self, x):
        return x.float()
"""


def test_self_call_in_a_mixin_of_a_model_is_a_model_call():
    assert found(MIXIN.format(mixin=", GenerationMixin"), ("HPU003",)) == [("HPU003", 12)]


def test_self_call_in_a_class_no_model_derives_from_is_not():
    assert found(MIXIN.format(mixin=""), ("HPU003",)) == []


MICRO = """
import torch


def _helper(model, tokens):
    return model(tokens)


def forward_in_parts(model, tokens, {size}):
    out = []
    for {counter} in range(tokens.shape[0] // {size}):
        out.append(_helper(model, tokens[:{size}]))
    return torch.cat(out)


def generate(model, tokens: torch.Tensor, steps):
    for context_length in range(1, steps):
        logits = forward_in_parts(model, tokens[:, :context_length], 2)
        tokens[:, context_length] = logits[:, -1].argmax(-1)
"""


def test_a_loop_over_micro_batches_is_part_of_one_step():
    # the decode loop around the helper is the step loop: its counter recompiles each token
    for counter, size in (("micro_batch_index", "size"), ("i", "micro_batch_size")):
        assert found(MICRO.format(counter=counter, size=size), ("HPU001",)) == [("HPU001", 18), ("HPU001", 19)]


def test_a_loop_over_whole_runs_makes_the_caller_an_epoch():
    # a helper whose loop runs many steps (each pass a model call): the caller's loop is not one step
    assert found(MICRO.format(counter="chunk", size="size"), ("HPU001",)) == []


ACCUM = """
import torch
import habana_frameworks.torch.core as htcore


def train_step(model, batches, optimizer, accumulation_steps):
    for _ in range(accumulation_steps):
        loss = model(next(batches)).sum()
        loss.backward()
    optimizer.step()
    return loss.item()


def train(model, batches, optimizer, steps, accumulation_steps):
    for step in range(steps):
        train_step(model, batches, optimizer, accumulation_steps)
        htcore.mark_step()
"""


def test_gradient_accumulation_parts_leave_the_step_function_hot():
    assert found(ACCUM, ("HPU005",)) == [("HPU005", 11)]


OPTIONAL_COMPILE = """
import torch


def next_token(model, x):
    return model(x)[:, -1].argmax(-1)


def generate(model, x, steps):
    for _ in range(steps):
        tok = next_token(model, x)
        print(tok.item())
        x = torch.cat([x, tok[:, None]], dim=1)
    return x


def main(model, x, compile=False):
    global next_token
    {guard}next_token = torch.compile(next_token)
    return generate(model, x, 4)
"""


def test_an_optional_compile_of_a_helper_leaves_its_callers_in_lazy_mode():
    src = OPTIONAL_COMPILE.format(guard="if compile:\n        ")
    assert found(src, ("HPU003", "HPU005")) == [("HPU005", 12), ("HPU003", 13)]


def test_a_helper_always_compiled_makes_its_caller_eager():
    assert found(OPTIONAL_COMPILE.format(guard=""), ("HPU003", "HPU005")) == []


ACCEL = """
import torch
from deepspeed.accelerator import get_accelerator


def sample(model, ids, start, maxlen):
    tokens = get_accelerator().LongTensor(ids)
    context_length = start
    while context_length <= maxlen:
        logits = model(tokens)
        tokens[:, context_length] = logits[:, -1].argmax(-1)
        context_length += 1
"""


def test_deepspeed_accelerator_constructors_make_device_tensors():
    assert found(ACCEL, ("HPU001",)) == [("HPU001", 11)]


BEAMS = """
import torch


def update(outputs, model_kwargs):
    attention_mask = model_kwargs["attention_mask"]
    model_kwargs["attention_mask"] = torch.cat([attention_mask, attention_mask.new_ones((attention_mask.shape[0], 1))], dim=-1)
    return model_kwargs


def window(outputs, state):
    state["buf"] = torch.cat([state["buf"][:, 1:], outputs], dim=-1)
    return state


def fresh(outputs, emb):
    emb = list(emb)
    emb[0] = torch.cat([outputs, emb[0]], dim=0)
    return emb


def beam_search(model, input_ids, model_kwargs, beam_idx, steps):
    for _ in range(steps):
        out = model(input_ids, **model_kwargs)
        nxt = out.argmax(-1)
        model_kwargs = update(out, model_kwargs)
        input_ids = torch.cat([input_ids[beam_idx, :], nxt.unsqueeze(-1)], dim=-1)
        model_kwargs = window(out, model_kwargs)
        rope = fresh(out, (out, out))
        kept = torch.cat([input_ids[:, 1:], nxt.unsqueeze(-1)], dim=-1)
    return input_ids
"""


def test_accumulators_regathered_or_held_by_the_callers_dict_grow():
    # the rolling window (line 12) and the sliding copy (line 30) keep their shape; `fresh` extends
    # a copy it made itself (line 18)
    assert found(BEAMS, ("HPU003",)) == [("HPU003", 7), ("HPU003", 27)]


BOUND = """
import torch


def beam_search(model, tokens, lengths, beam_size, steps):
    width = int(lengths.max().item())
    for step in range(steps):
        logits = model(tokens)
        scores, indices = torch.sort(logits.view(-1), descending=True)
        best = indices[: 2 * beam_size]
        first = indices[:width]
        n = int(scores[0].item())
        top = indices[:n]


def main(model, tokens, lengths):
    beam_search(model, tokens, lengths, int(lengths[0].item()), 8)
"""


def test_a_number_read_before_the_loop_is_the_same_bound_every_pass():
    assert found(BOUND, ("HPU006",)) == [("HPU006", 13)]


MEMBERSHIP = """
import torch
import torch.nn as nn


class Attention(nn.Module):
    def forward(self, x, attention_mask=None):
        if attention_mask is not None and 0.0 in attention_mask:
            x = x * attention_mask
        if "causal" in self.kinds:
            x = x + 1
        if "mask" in attention_mask:
            x = x + 2
        return x
"""


def test_membership_in_a_device_tensor_reads_it_on_the_host():
    src = MEMBERSHIP.replace("def forward(self, x, attention_mask=None):",
                             "def forward(self, x, attention_mask: torch.Tensor = None):")
    assert found(src, ("HPU008",)) == [("HPU008", 8)]


AUTOGRAD = """
import torch
import torch.nn as nn


class Recompute(torch.autograd.Function):
    @staticmethod
    def forward(ctx, fn, x):
        ctx.fn = fn
        return fn(x)

    @staticmethod
    def backward(ctx, grad):
        out = ctx.fn(grad)
        if torch.equal(out, torch.zeros_like(out)):
            out = grad
        return None, out


class Block(nn.Module):
    def forward(self, x):
        return Recompute.apply(torch.sin, x)
"""


def test_a_custom_functions_backward_runs_every_step():
    assert found(AUTOGRAD, ("HPU002",)) == [("HPU002", 15)]


ROPE = """
import torch
import torch.nn as nn


class Rotary(nn.Module):
    def forward(self, x, seq_len=None):
        if seq_len > self.max_seq_len_cached:
            self.max_seq_len_cached = seq_len
        return self.cos_cached[:seq_len].to(x.dtype)


class Attention(nn.Module):
    def __init__(self):
        super().__init__()
        self.rotary_emb = Rotary()

    def forward(self, hidden, past_key_value: tuple[torch.Tensor, torch.Tensor] = None, reuse_cache=False):
        kv_seq_len = hidden.shape[-2]
        if past_key_value is not None:
            if reuse_cache:
                kv_seq_len = past_key_value[0][-2]
            else:
                kv_seq_len += past_key_value[0].shape[-2]
        return self.rotary_emb(hidden, seq_len={arg})
"""


def test_a_number_on_one_path_and_a_tensor_on_another_is_not_taken_for_a_tensor():
    # under reuse_cache the cache holds shapes: the code is written for a Python int
    assert found(ROPE.format(arg="kv_seq_len"), ("HPU006", "HPU008")) == []


def test_a_parameter_every_caller_fills_with_a_tensor_is_still_one():
    assert found(ROPE.format(arg="past_key_value[0][-2]"), ("HPU006", "HPU008")) == [("HPU008", 8)]


STEPPED = """
import torch
import habana_frameworks.torch.core as htcore


def run(model, loader, buf: torch.Tensor, opt):
    offset = 0
    total = 0.0
    for batch in loader:
        loss = model(batch).sum()
        loss.backward()
        opt.step()
        htcore.mark_step()
        buf[offset:offset + batch.size(0)] = loss
        offset += batch.size(0)
        total += loss.detach()
        buf[:, int(total)] = 0
"""


def test_a_name_a_step_loop_steps_by_an_int_is_a_counter():
    # `offset` moves by the batch size every pass; `total` adds a tensor, it is not a counter
    assert found(STEPPED, ("HPU001",)) == [("HPU001", 14)]


def test_a_tensor_method_read_without_a_call_is_not_a_tensor():
    src = """
    import torch
    import torch.nn as nn


    class Step(nn.Module):
        def forward(self, out: torch.Tensor):
            device = "cpu" if out.type == "hpu" else out.device
            if out.sum() > 0:
                out = out * 2
            return out
    """
    assert found(src, ("HPU008",)) == [("HPU008", 9)]


def test_a_helper_returning_a_tensor_or_a_tuple_unpacks_to_its_parts():
    src = """
    import torch
    import habana_frameworks.torch.core as htcore


    def extract(model, frame, return_h_w=False):
        out = model(frame.unsqueeze(0))
        h, w = int(frame.shape[1] / 16), int(frame.shape[2] / 16)
        if return_h_w:
            return out, h, w
        return out


    def run(model, frames):
        for frame in frames:
            feat, h, w = extract(model, frame, True)
            if h > 2:
                feat = feat * 2
            if feat.sum() > 0:
                feat = feat + 1
            htcore.mark_step()
    """
    assert found(src, ("HPU008",)) == [("HPU008", 19)]


def test_a_plain_number_on_one_path_and_a_tensor_on_another_stays_a_tensor():
    src = """
    import torch


    class Scheduler:
        def __init__(self, device):
            self.timesteps = torch.arange(10, device=device)
            self.one = torch.tensor(1.0)

        def previous_timestep(self, timestep: int):
            if self.custom:
                prev_t = self.timesteps[timestep + 1]
            else:
                prev_t = timestep - 1
            return prev_t

        def step(self, out, t):
            prev_t = self.previous_timestep(t)
            scale = self.one if prev_t >= 0 else 2.0
            return out * scale


    def sample(unet, scheduler, x):
        for t in scheduler.timesteps:
            x = scheduler.step(unet(x, t), t)
        return x


    def main(unet, x, device):
        return sample(unet, Scheduler(device), x)
    """
    assert found(src, ("HPU008",)) == [("HPU008", 19)]


def test_a_key_looked_up_in_a_model_output_is_not_a_scan_of_a_tensor():
    src = """
    import torch


    def update(outputs: torch.Tensor, labels: torch.Tensor, pad_token_id, names):
        for name in names:
            if name in outputs:
                pass
        if pad_token_id in labels:
            pass


    def loop(model, x, labels, names):
        for _ in range(4):
            update(model(x), labels, 0, names)
    """
    assert found(src, ("HPU008",)) == [("HPU008", 9)]


def test_batch_parts_a_pass_leaves_on_the_host_are_host_tensors():
    src = """
    import torch
    import habana_frameworks.torch.core as htcore
    from torch.utils.data import DataLoader


    def predict(model, data, device, features):
        loader = DataLoader(data, batch_size=8)
        results = []
        for input_ids, input_mask, example_indices in loader:
            input_ids = input_ids.to(device)
            input_mask = input_mask.to(device)
            logits = model(input_ids, input_mask)
            htcore.mark_step()
            for i, example_index in enumerate(example_indices):
                results.append(features[example_index.item()])
            if input_mask.sum().item() > 0:
                results.append(None)
        return results
    """
    assert found(src, ("HPU005",)) == [("HPU005", 17)]


KV_OFFSETS = """
import torch
import torch.nn as nn


class InferenceParams:
    def __init__(self, max_len):
        self.sequence_len_offset = 0
        self.batch_size_offset = 0


class Attention(nn.Module):
    def __init__(self):
        super().__init__()
        self.memory = torch.zeros(64, 4, 8, device="hpu")

    def forward(self, k, inference_params=None):
        start = inference_params.sequence_len_offset
        end = start + k.size(0)
        b0 = inference_params.batch_size_offset
        self.memory[start:end, b0:b0 + k.size(1)] = k
        return self.memory[:end]


def step(model, tokens, {params}, n):
    for micro_batch in range(n):
        {params}.batch_size_offset += 1
        out = model(tokens, inference_params={params})
    {params}.batch_size_offset = 0
    {params}.sequence_len_offset += tokens.size(0)
    return out
"""


def test_an_offset_another_object_counts_per_step_is_a_constant_of_the_graph():
    # batch_size_offset is reset by the helper that adds to it: the same values every step
    assert found(KV_OFFSETS.format(params="inference_params"), ("HPU001",)) == [("HPU001", 21), ("HPU001", 22)]


def test_an_object_named_after_no_counting_class_says_nothing():
    assert found(KV_OFFSETS.format(params="state"), ("HPU001",)) == []


def test_the_link_does_not_depend_on_the_order_workers_finish_files(tmp_path):
    # `-j 1` and `-j 2` gave different findings on Model-References: the project's facts were
    # built in the order summaries came back, and first-found answers depended on it
    from pathlib import Path

    from hpulint.analysis.link import link
    from hpulint.config import Config
    from hpulint.engine import analyse_file

    names = ("b_train", "a_model", "c_utils")
    for n in names:
        (tmp_path / f"{n}.py").write_text(f"def {n}(x):\n    return x\n")
    sums = [analyse_file(Path(tmp_path / f"{n}.py"), Config(), n, lint=False, index=True).summary for n in names]
    forward = link(sums, "auto")
    backward = link(sums[::-1], "auto")
    assert list(forward.project.modules) == list(backward.project.modules) == sorted(names)
    assert list(forward.project.functions) == list(backward.project.functions)
