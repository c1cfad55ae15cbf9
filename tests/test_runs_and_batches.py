"""How a run of steps is written, as the sixth held-out set showed it missing
(tests/data/real_code_notes.md): a generator whose decoding loop yields a token a pass, a sampler
that calls the `model_fn` it is given, a network loaded from a pickle and moved to the device, a
loop over a data loader with optimisation epochs inside (reinforcement learning), a function a
batch calls once that runs a generation and then masks its result, a helper given the model by
its callers and a configuration by one of them, and a slice with two counters. Each has a
look-alike that stays quiet.

The cases are written for these tests; none is copied from a repository.
"""
from __future__ import annotations

import textwrap

from hpulint.engine import lint_source
from snippets import lint_project as lint


def found(src: str, select: tuple = ()) -> list:
    out = [(f.code, f.line) for f in lint_source(textwrap.dedent(src), "run.py")]
    return [x for x in out if not select or x[0] in select]



STREAM = """
import torch


def stream(model, tokens, start, stop):
    pos = start
    while pos < stop:
        logits = model(tokens[:, :pos])
        tokens[:, pos] = logits[:, -1].argmax(-1)
        pos += 1
        {YIELD}


def chat(model, prompts):
    for prompt in prompts:
        for tokens in stream(model, prompt, 4, 32):
            if torch.equal(tokens, prompt):
                break
"""


def test_a_generators_decoding_loop_is_a_step_loop_even_when_a_loop_calls_the_generator():
    got = found(STREAM.replace("{YIELD}", "yield tokens"), ("HPU001", "HPU002"))
    # each pass yields one token: the position is a new constant every decoding step, and the
    # consumer's comparison syncs once per token
    assert got == [("HPU001", 8), ("HPU001", 9), ("HPU002", 17)]


def test_a_helper_without_yield_called_once_per_prompt_keeps_its_own_loop():
    # the same loop in a function that returns: a step loop of its own, which the prompt loop
    # runs once per prompt (the consumer's loop over a returned tensor is no decoding)
    src = STREAM.replace("{YIELD}", "").replace("        pos += 1\n        \n", "        pos += 1\n    return [tokens]\n")
    assert found(src, ("HPU001", "HPU002")) == [("HPU001", 8), ("HPU001", 9)]


SAMPLER = """
import torch


class Solver:
    def __init__(self, {PARAM}, schedule):
        self.model = lambda x, t: {PARAM}(x, t.expand(x.shape[0]))
        self.schedule = schedule

    def sample(self, x, steps):
        timesteps = torch.linspace(1.0, 0.0, steps + 1, device=x.device)
        for step in range(steps):
            t = timesteps[step]
            x = x - self.model(x, t)
        return x
"""


def test_a_sampler_calls_the_model_fn_it_is_given_every_step():
    assert found(SAMPLER.replace("{PARAM}", "model_fn"), ("HPU001",)) == [("HPU001", 13)]


def test_a_callable_named_for_something_else_is_not_a_model():
    # `weight_fn(x, t)`: a weighting function of the schedule, no network
    assert found(SAMPLER.replace("{PARAM}", "weight_fn"), ("HPU001",)) == []


PICKLED = """
import pickle
import torch


def generate(path, latents, steps, s_min, s_max, device):
    with open(path, "rb") as f:
        {NAME} = pickle.load(f)["ema"].to(device)
    t_steps = torch.linspace(80.0, 0.002, steps, device=device)
    x = latents
    for t_cur in t_steps:
        gamma = 0.1 if s_min <= t_cur <= s_max else 0.0
        x = x + gamma * {NAME}(x, t_cur)
    return x
"""


def test_a_network_loaded_and_moved_to_the_device_is_called_every_step():
    # `.to(device)` of what pickle loaded looks like a tensor; a tensor is never called
    assert found(PICKLED.replace("{NAME}", "net"), ("HPU008",)) == [("HPU008", 12)]


def test_a_loaded_tensor_named_for_no_network_makes_no_step_loop():
    assert found(PICKLED.replace("{NAME}", "table"), ("HPU008",)) == []


RL = """
import torch


def rollout(policy, prompts):
    responses = policy.generate(prompts)
    masks = responses == 0
    responses[masks] = -1
    return responses, masks


def train(policy, loader, optimizer, epochs):
    for batch in loader:
        responses, masks = rollout(policy, batch)
        {SETUP}
        for _ in range(epochs):
            loss = policy(responses)[~masks].mean()
            loss.backward()
            optimizer.step()
"""


def test_a_data_loader_loop_with_optimisation_epochs_inside_runs_its_body_once_per_batch():
    got = found(RL.replace("{SETUP}", ""), ("HPU006",))
    # the rollout's mask store runs once per batch, and the epochs' mask indexing once per step
    assert got == [("HPU006", 8), ("HPU006", 17)]


def test_an_epoch_loop_around_the_same_training_is_not_a_step_loop():
    src = RL.replace("for batch in loader:", "for batch in range(3):").replace("{SETUP}", "")
    # a loop over epoch numbers: the training loop inside it is the step loop
    assert found(src, ("HPU006",)) == [("HPU006", 17)]


PPO = {
    "gen.py": """
        import torch


        def generate(model, tokens, steps):
            for step in range(steps):
                logits = model(tokens)
                tokens = torch.cat([tokens, logits[:, -1:].argmax(-1)], dim=1)
            done = tokens == 0
            tokens[done] = 0
            return tokens
    """,
    "train.py": """
        import torch
        from gen import generate


        def trajectory(policy, batch):
            tokens = generate(policy, batch, 16)
            padding = tokens == 2
            tokens[padding] = 0
            return tokens


        def train(policy, loader, optimizer):
            for batch in {ITER}:
                tokens = trajectory(policy, batch)
                for _ in range(4):
                    loss = policy(tokens).mean()
                    loss.backward()
                    optimizer.step()
    """,
}


def test_a_function_a_batch_calls_once_around_a_generation_runs_once_per_batch(tmp_path, capsys, monkeypatch):
    files = dict(PPO, **{"train.py": PPO["train.py"].replace("{ITER}", "loader")})
    got = lint(tmp_path, files, capsys, monkeypatch)
    # trajectory() masks its generation once per batch; generate()'s own mask after its
    # decoding loop is the end of one run, like its setup
    assert "train.py:9:5:HPU006" in got
    assert not any(g.startswith("gen.py:10") for g in got)


def test_a_loop_over_prompts_around_the_same_function_is_a_loop_over_runs(tmp_path, capsys, monkeypatch):
    files = dict(PPO, **{"train.py": PPO["train.py"].replace("{ITER}", "range(3)")})
    got = lint(tmp_path, files, capsys, monkeypatch)
    assert not any(g.startswith("train.py:9") for g in got)


STOPS = """
import torch


def stopped(stop_tokens, tokens, row, current):
    for group in stop_tokens:
        window = tokens[row, : current + 1]
        if window.shape[0] >= group.shape[0]:
            return True
    return False


def decode(model, tokens, stop_tokens, steps):
    for pos in range(steps):
        tokens[:, pos] = model(tokens).argmax(-1)[:, -1]
        for row in range(tokens.size(0)):
            stopped(stop_tokens, tokens, row, {CURRENT})
"""


def test_a_slice_with_an_inner_loops_row_and_the_steps_position_reports_the_position():
    # the row is a counter of a loop inside the step (the same rows every step); the position
    # is the step's counter, a new slice bound every step
    got = found(STOPS.replace("{CURRENT}", "pos"), ("HPU001",))
    assert ("HPU001", 7) in got


def test_the_same_slice_with_a_fixed_length_is_quiet():
    assert ("HPU001", 7) not in found(STOPS.replace("{CURRENT}", "8"), ("HPU001",))


ANNOTATED = {
    "seqs.py": """
        from typing import Tuple
        import torch


        def truncate(sequences, stop) -> Tuple[torch.Tensor, torch.Tensor]:
            hits = torch.isin(sequences, stop)
            padding = torch.cumsum(hits, dim=1) > 1
            return {RET}, sequences
    """,
    "train.py": """
        import torch
        from seqs import truncate


        def train(policy, loader, optimizer, stop):
            for batch in loader:
                padding, tokens = truncate(batch, stop)
                scores = policy(tokens)
                scores[padding] = 0.0
                scores.mean().backward()
                optimizer.step()
    """,
}


def test_a_tuple_returned_says_more_than_its_annotation(tmp_path, capsys, monkeypatch):
    # `-> Tuple[Tensor, Tensor]`, but the first is a mask: the caller's store is a mask store
    files = dict(ANNOTATED, **{"seqs.py": ANNOTATED["seqs.py"].replace("{RET}", "padding")})
    assert "train.py:10:9:HPU006" in lint(tmp_path, files, capsys, monkeypatch)


def test_a_tuple_whose_first_is_a_float_tensor_keeps_the_store_quiet(tmp_path, capsys, monkeypatch):
    files = dict(ANNOTATED, **{"seqs.py": ANNOTATED["seqs.py"].replace("{RET}", "padding.float()")})
    assert "train.py:10:9:HPU006" not in lint(tmp_path, files, capsys, monkeypatch)


DECODE = """
import torch


def generate(model, tokenizer, prompt, steps):
    ids = prompt.to("hpu")
    for step in range(steps):
        {INSIDE}
        logits = model(ids)
        ids = torch.cat([ids, logits[:, -1:].argmax(-1)], dim=1)
    {AFTER}
    return ids
"""


def test_decoding_device_ids_with_a_tokenizer_every_step_reads_them_to_the_host():
    src = DECODE.replace("{INSIDE}", "print(tokenizer.decode(ids[0]))").replace("{AFTER}", "")
    assert ("HPU005", 8) in found(src, ("HPU005",))


def test_decoding_them_once_after_the_loop_is_quiet():
    src = DECODE.replace("{INSIDE}", "").replace("{AFTER}", "print(tokenizer.batch_decode(ids))")
    assert found(src, ("HPU005",)) == []


SKIP = """
import torch


def train(model, loader, optimizer):
    for step, (x, y) in enumerate(loader):
        loss = torch.nn.functional.mse_loss(model(x.to("hpu")), y.to("hpu"))
        loss.backward()
        optimizer.step()
        {SKIP}
        print(loss.item())
"""


def test_a_pass_that_skips_to_the_next_unless_it_is_a_logging_step_reads_on_an_interval():
    for skip in ("if step % 10 != 0:\n            continue", "if step % 10:\n            continue",
                 "if step % 10 != 0 or not verbose:\n            continue"):
        src = SKIP.replace("{SKIP}", skip).replace("(model, loader,", "(model, verbose, loader,")
        assert found(src, ("HPU005",)) == [], skip


def test_a_pass_that_skips_on_another_test_still_reads_every_step():
    src = SKIP.replace("{SKIP}", "if loss is None:\n            continue")
    assert found(src, ("HPU005",)) == [("HPU005", 12)]


def test_a_pass_skipped_on_a_flag_is_not_a_logging_interval():
    # `if interrupted: continue` skips nothing on the usual pass: the read after it is per step
    src = SKIP.replace("{SKIP}", "if interrupted:\n            continue").replace("(model, loader,", "(model, interrupted, loader,")
    assert found(src, ("HPU005",)) == [("HPU005", 12)]
