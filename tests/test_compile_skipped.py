"""The thirteenth held-out set's graph-break kinds, statically (no torch): context managers Dynamo does
not enter (save_on_cpu, FlopCounterMode, ...), torch.save/load and pickle, an LR scheduler's methods,
and a method compiled as a bound method (`self.m = torch.compile(self.m)`) with what it calls. Each
kind was measured on torch 2.13 (fixtures in fixtures/HPU012 carry the counts)."""
from __future__ import annotations

from textwrap import dedent

import pytest

from hpulint import Config, lint_source

COMPILE = ("HPU012", "HPU013", "HPU014", "HPU015", "HPU016", "HPU017")


def found(src: str) -> list:
    return [(f.code, f.line) for f in lint_source(dedent(src), "t.py", Config()) if f.code in COMPILE]


def messages(src: str) -> list:
    return [f.message for f in lint_source(dedent(src), "t.py", Config()) if f.code in COMPILE]


CONTEXT = """\
import torch
import torch.nn as nn
from torch.utils.flop_counter import FlopCounterMode


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(8, 8)

    def forward(self, x):
        with {cm}:
            print("inside")
            y = self.lin(x)
        return y


model = torch.compile(Block())
for _ in range(3):
    model(torch.randn(2, 8))
"""


@pytest.mark.parametrize("cm, expected", [
    ("torch.autograd.graph.save_on_cpu()", [("HPU012", 12)]),  # the `with`, once: nothing inside the block
    ("torch.autograd.graph.save_on_cpu(pin_memory=False)", [("HPU012", 12)]),
    ("torch.autograd.graph.saved_tensors_hooks(lambda t: t, lambda t: t)", [("HPU012", 12)]),
    ("FlopCounterMode(display=False) as meter", [("HPU012", 12)]),
    ("torch.autograd.detect_anomaly()", [("HPU012", 12)]),
    ("torch.autograd.set_detect_anomaly(True)", [("HPU012", 12)]),
    ("torch.device(\"cpu\")", [("HPU012", 12)]),
    # traced (measured): only the print inside is a break
    ("torch.autograd.graph.disable_saved_tensors_hooks(\"no\")", [("HPU012", 13)]),
    ("torch.profiler.record_function(\"block\")", [("HPU012", 13)]),
    ("torch.no_grad()", [("HPU012", 13)]),
])
def test_context_managers_dynamo_does_not_enter(cm, expected):
    assert found(CONTEXT.format(cm=cm)) == expected


def test_the_context_message_names_the_manager_and_the_fix():
    [msg] = messages(CONTEXT.format(cm="torch.autograd.graph.save_on_cpu()"))
    assert "Dynamo does not enter a `save_on_cpu` context manager" in msg
    assert "the function that holds the `with` runs eagerly" in msg
    assert "around the compiled call and its backward" in msg


def test_a_context_manager_around_the_compiled_call_is_not_reported():
    src = """\
    import torch
    import torch.nn as nn
    from torch.utils.flop_counter import FlopCounterMode

    model = torch.compile(nn.Linear(8, 8))
    for _ in range(3):
        with torch.autograd.graph.save_on_cpu():
            loss = model(torch.randn(2, 8)).sum()
            loss.backward()
        with FlopCounterMode(display=False):
            model(torch.randn(2, 8))
    """
    assert found(src) == []


SAVE = """\
import io
import pickle

import torch
import torch.nn as nn

model = nn.Linear(8, 1)
log = []


def snapshot(step):
    if step % 2 == 0:
        {call}


@torch.compile
def train_step(x, step):
    loss = model(x).pow(2).mean()
    snapshot(step)
    return loss


for step in range(4):
    train_step(torch.randn(4, 8), step).backward()
"""


@pytest.mark.parametrize("call, expected", [
    ("torch.save(model.state_dict(), io.BytesIO())", [("HPU012", 13)]),
    ("torch.load(\"ckpt.pt\")", [("HPU012", 13)]),
    ("pickle.dumps({\"step\": step})", [("HPU012", 13)]),
    ("model.state_dict()", []),  # traced (measured): only the serialisation breaks
])
def test_serialisation_in_the_region(call, expected):
    assert found(SAVE.format(call=call)) == expected


def test_torch_save_in_the_eager_loop_is_not_reported():
    src = """\
    import io

    import torch
    import torch.nn as nn

    model = nn.Linear(8, 1)


    @torch.compile
    def train_step(x):
        return model(x).pow(2).mean()


    for step in range(4):
        train_step(torch.randn(4, 8)).backward()
        torch.save(model.state_dict(), io.BytesIO())
    """
    assert found(src) == []


SCHEDULER = """\
import torch
import torch.nn as nn

model = nn.Linear(8, 2)
opt = torch.optim.SGD(model.parameters(), lr=0.1)


@torch.compile
def train_step(x):
    loss = model(x).pow(2).mean()
    {call}
    return loss


{made}
for _ in range(4):
    train_step(torch.randn(4, 8)).backward()
    opt.step()
"""


@pytest.mark.parametrize("made, call, expected", [
    # made after the function that uses it: the check runs once the file is read
    ("sched = torch.optim.lr_scheduler.StepLR(opt, 2)", "sched.step()", [("HPU012", 11)]),
    ("sched = torch.optim.lr_scheduler.OneCycleLR(opt, 0.1, total_steps=8)", "sched.get_last_lr()",
     [("HPU012", 11)]),
    ("sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda s: 1.0)", "sched.state_dict()", [("HPU012", 11)]),
    # a GradScaler's step is still the GradScaler's finding, an optimizer's step is compiled (not reported)
    ("sched = torch.amp.GradScaler()", "sched.step(opt)", [("HPU012", 11)]),
    ("sched = None", "opt.step()", []),
    ("sched = object()", "sched.step()", []),
])
def test_lr_scheduler_methods_in_the_region(made, call, expected):
    assert found(SCHEDULER.format(made=made, call=call)) == expected


def test_a_compiled_optimizer_and_scheduler_step_is_not_reported():
    """The compiled-optimizer recipe (`opt.step(); sched.step()` in one compiled function): measured,
    Dynamo breaks inside the optimizer's step (the scheduler wraps it), not at `sched.step()`."""
    src = """\
    import torch

    model = torch.nn.Linear(16, 16)
    opt = torch.optim.Adam(model.parameters(), lr=torch.tensor(0.01))
    sched = torch.optim.lr_scheduler.LinearLR(opt, total_iters=5)


    @torch.compile(fullgraph=False)
    def step_both():
        opt.step()
        sched.step()


    for _ in range(4):
        model(torch.randn(4, 16)).sum().backward()
        step_both()
    """
    assert found(src) == []


def test_the_scheduler_message_says_which_kind():
    [msg] = messages(SCHEDULER.format(made="sched = torch.optim.lr_scheduler.StepLR(opt, 2)", call="sched.step()"))
    assert "`LRScheduler.step()`" in msg and "Step the scheduler in the eager code" in msg
    [msg] = messages(SCHEDULER.format(made="sched = torch.amp.GradScaler()", call="sched.step(opt)"))
    assert "GradScaler" in msg and "LRScheduler" not in msg


def test_a_diffusion_schedulers_step_is_not_an_lr_scheduler():
    src = """\
    import torch
    from diffusers import DDPMScheduler


    class Sampler:
        def __init__(self, unet):
            self.unet = unet
            self.scheduler = DDPMScheduler()
            self.step = torch.compile(self.denoise)

        def denoise(self, x, t):
            return self.scheduler.step(self.unet(x, t), t, x).prev_sample
    """
    assert found(src) == []


BOUND = """\
import torch
import torch.nn as nn


class Trainer:
    def __init__(self, model):
        self.model = model
        self.sched = torch.optim.lr_scheduler.StepLR(torch.optim.SGD(model.parameters(), lr=0.1), 2)
        {compile}

    def end_of_step(self):
        self.sched.step()

    def compute_loss(self, x):
        loss = self.model(x).pow(2).mean()
        self.end_of_step()
        return loss


trainer = Trainer(nn.Linear(4, 1))
{outside}
"""


@pytest.mark.parametrize("compile_, outside, expected", [
    ("self.compute_loss = torch.compile(self.compute_loss)", "", [("HPU012", 12)]),
    ("self.fast_loss = torch.compile(self.compute_loss)", "", [("HPU012", 12)]),
    ("pass", "fast = torch.compile(trainer.compute_loss)", [("HPU012", 12)]),
    ("pass", "", []),  # nothing compiled: the method runs eagerly
])
def test_a_method_compiled_as_a_bound_method_and_what_it_calls(compile_, outside, expected):
    assert found(BOUND.format(compile=compile_, outside=outside)) == expected
