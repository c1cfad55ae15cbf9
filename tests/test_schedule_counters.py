"""Counters that are not `range` targets, and buffers registered through a helper: what samplers
written like the public diffusion repositories of the holdout set do (`tests/data/real_code_notes.md`).

- a loop over a host list of ints made from a schedule (`times = list(reversed(t.int().tolist()))`,
  `pairs = list(zip(times[:-1], times[1:]))`) takes a new Python int each pass, like `range`;
- `register_buffer = lambda name, val: self.register_buffer(name, val.to(torch.float32))` registers
  a tensor attribute just as the method does;
- the fill value of `torch.full((b,), t)` is a constant of the graph (Gaudi), reported as a fill
  value and not as a size; on PyTorch/XLA, where a fill value is graph data (calibrated), it is not.

The cases are written for these tests; none is copied from a repository.
"""
from __future__ import annotations

import textwrap

from hpulint.engine import lint_source

SAMPLER = """
import torch
import torch.nn as nn
{imports}

class Diffusion(nn.Module):
    def __init__(self, net, n=100):
        super().__init__()
        self.net = net
        register_buffer = lambda name, val: self.register_buffer(name, val.to(torch.float32))
        register_buffer("alphas_cumprod", torch.linspace(0.99, 0.01, n))

    @torch.no_grad()
    def sample(self, shape, steps=20):
        times = torch.linspace(-1, 99, steps=steps + 1)
        times = list(reversed(times.int().tolist()))
        time_pairs = list(zip(times[:-1], times[1:]))
        img = torch.randn(shape)
        for time, time_next in {loop}:
            cond = torch.full((shape[0],), time, dtype=torch.long)
            eps = self.net(img, cond)
            alpha = self.alphas_cumprod[time]
            alpha_next = self.alphas_cumprod[time_next]
            img = img * alpha_next.sqrt() + eps * (1 - alpha).sqrt()
        return img
"""


def findings(src: str) -> list:
    return [(f.code, f.line, f.message.split(" becomes")[0] + (" (a fill value)" if "(a fill value)" in f.message
                                                              else " (a tensor index)" if "(a tensor index)" in f.message
                                                              else ""))
            for f in lint_source(textwrap.dedent(src), "sampler.py")]


def test_a_loop_over_a_host_int_schedule_takes_a_new_constant_each_pass():
    got = findings(SAMPLER.format(imports="", loop="time_pairs"))
    assert got == [
        ("HPU001", 20, "loop counter `time` (a fill value)"),
        ("HPU001", 22, "loop counter `time` (a tensor index)"),
        ("HPU001", 23, "loop counter `time_next` (a tensor index)"),
    ]


def test_the_schedule_through_tqdm_is_the_same_loop():
    got = findings(SAMPLER.format(imports="from tqdm import tqdm", loop="tqdm(time_pairs, desc='sampling')"))
    assert [(c, line) for c, line, _ in got] == [("HPU001", 20), ("HPU001", 22), ("HPU001", 23)]


def test_a_list_of_tensors_or_of_strings_is_not_a_schedule_of_ints():
    src = SAMPLER.format(imports="", loop="time_pairs").replace(
        "times = list(reversed(times.int().tolist()))", "times = list(reversed(list(times.unbind(0))))")
    assert [(c, line) for c, line, _ in findings(src)] == []


def test_without_the_buffer_helper_the_schedule_is_unknown_and_its_element_reported_where_used_with_tensors():
    # the element `alpha` goes through `.sqrt()` (a method no Python or NumPy number has) into
    # arithmetic with the model's output: a tensor's element, a constant either way (line 22)
    src = SAMPLER.format(imports="", loop="time_pairs").replace(
        'register_buffer("alphas_cumprod"', 'self.alphas_cumprod = [0.5] * n or ("alphas_cumprod"')
    assert [(c, line) for c, line, _ in findings(src)] == [("HPU001", 20), ("HPU001", 22)]


def test_on_xla_a_fill_value_is_data_and_stays_quiet_while_the_index_is_reported():
    got = findings(SAMPLER.format(imports="import torch_xla.core.xla_model as xm", loop="time_pairs"))
    assert [(c, line) for c, line, _ in got] == [("HPU001", 22), ("HPU001", 23)]


def test_the_size_of_torch_full_is_still_a_size():
    src = """
    import torch

    def run(model, x, n):
        for i in range(n):
            pad = torch.full((i, 4), 0.0)
            model(torch.cat([x, pad]))
    """
    got = lint_source(textwrap.dedent(src), "pad.py")
    assert [(f.code, f.line, "(a size)" in f.message) for f in got] == [("HPU001", 6, True)]


SCHEDULER = """
import torch
from diffusers import EulerDiscreteScheduler


class HpuEulerScheduler(EulerDiscreteScheduler):
    def scale_model_input(self, sample: torch.Tensor, timestep):
        if self.step_index is None:
            self._init_step_index(timestep)
        sigma = self.sigmas[self.step_index]
        {use}
        return sample

    def step(self, model_output, timestep, sample):
        self._step_index += 1
        return sample + model_output
"""


def test_a_library_schedulers_step_index_property_reads_the_counted_backing_field():
    """diffusers' `step_index` property returns `self._step_index`, which `step()` adds one to per call:
    the element it reads is a new constant every denoising step once it is used with the sample."""
    got = lint_source(textwrap.dedent(SCHEDULER.format(use="sample = sample / ((sigma**2 + 1) ** 0.5)")), "sched.py")
    assert [(f.code, f.line, "`self.step_index`" in f.message) for f in got] == [("HPU001", 10, True)]


def test_the_element_only_logged_is_not_reported():
    got = lint_source(textwrap.dedent(SCHEDULER.format(use="print(sigma)")), "sched.py")
    assert [(f.code, f.line) for f in got] == []


def test_a_step_counter_kept_by_hand_equal_to_a_limit_is_one_step():
    """`... or global_step == args.max_train_steps` is a logging interval, and `global_step ==
    args.warmup` holds on one step, though `global_step` is not a loop's own counter."""
    src = """
    def train(model, loader, opt, args):
        global_step = 0
        train_loss = 0.0
        for batch in loader:
            loss = model(batch).mean()
            loss.backward()
            opt.step()
            global_step += 1
            train_loss += loss.detach()
            if (global_step - 1) % args.logging_step == 0 or global_step == args.max_train_steps:
                print(train_loss.item())
            if global_step == args.warmup:
                print(loss.item())
            if args.verbose:
                print(loss.item())
    """
    assert [(f.code, f.line) for f in lint_source(textwrap.dedent(src), "train.py")] == [("HPU005", 16)]


def test_a_branch_that_stops_the_run_reads_once():
    """`if not math.isfinite(loss.item()): print(loss.item()); sys.exit(1)`: the test reads every
    step (reported), the message only on the failing step (not reported)."""
    src = """
    import math
    import sys

    def train(model, loader, opt):
        for batch in loader:
            loss = model(batch).mean()
            if not math.isfinite(loss.item()):
                print("Loss is {}, stopping training".format(loss.item()))
                sys.exit(1)
            if loss.isnan():
                print("nan at", loss.item())
                raise FloatingPointError("nan")
            loss.backward()
            opt.step()
    """
    assert [(f.code, f.line) for f in lint_source(textwrap.dedent(src), "train.py")] == [
        ("HPU005", 8), ("HPU008", 11)]


def test_a_test_pinning_an_outer_loops_counter_holds_on_every_step_of_that_pass():
    """`if fold == 0:` inside the step loop of each fold runs on every step of fold 0; `if step == 0:`
    runs on one step."""
    src = """
    def run(model, loaders, refs):
        for fold, loader in enumerate(loaders):
            for step, batch in enumerate(loader):
                out = model(batch)
                if fold == 0:
                    refs.append(out.cpu())
                if step == 0:
                    print(out.cpu())
    """
    assert [(f.code, f.line) for f in lint_source(textwrap.dedent(src), "cv.py")] == [("HPU005", 7)]


def test_a_branch_that_returns_before_its_final_raise_runs_every_step():
    """`if last_stage: ... return loss ... raise NotImplementedError(...)`: the raise is the rare
    path; the body runs every step."""
    src = """
    import torch

    def forward_step(batch, model, metric, last_stage):
        output = model(batch)
        if last_stage:
            if metric == "accuracy":
                correct = (output.argmax(-1) == batch).float()
                correct[(1 - batch).bool()] = 1
                return correct.sum()
            raise NotImplementedError(metric)
        return None

    def evaluate(loader, model):
        for batch in loader:
            forward_step(batch, model, "accuracy", True)
    """
    assert [(f.code, f.line) for f in lint_source(textwrap.dedent(src), "ev.py")] == [("HPU006", 9)]
