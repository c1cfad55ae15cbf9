"""Kinds the ninth held-out set showed wrong (tests/data/real_code_notes.md): code around a compiled
model on an XLA device still records lazily; `if not should_log: return` guards the rest of a
function; a trainer module's own step buffer stays in host memory; a one-entry registry of loss
functions; an accumulation flag tested again for logging; `typing.cast` to a project class; a
torch kernel compiled with `torch.compile` does not make its file eager; a dropped `.to("cpu")` of
a model's output still waits for the device; a step function run by whichever schedule a helper
returns (Megatron's `get_forward_backward_func()`); and, from hand-read round 13, a field of a state
object a call fetched (a modular pipeline block) and a meshgrid of host ranges. Each has a look-alike that stays quiet.

The cases are written for these tests; none is copied from a repository.
"""
from __future__ import annotations

import textwrap

from hpulint.engine import lint_source
from snippets import lint_project as lint


def found(src: str, select: tuple = ()) -> list:
    out = [(f.code, f.line) for f in lint_source(textwrap.dedent(src), "run.py")]
    return [x for x in out if not select or x[0] in select]


XLA_DECODE = """
import torch
import torch_xla
{EAGER}


def generate(model, ids, steps):
    device = torch_xla.device()
    compiled = torch.compile(model, backend="openxla")
    for _ in range(steps):
        logits = compiled(ids)
        host = logits.to("cpu")
        nxt = host[:, -1].argmax(-1, keepdim=True)
        ids = torch.cat([ids.cpu(), nxt], dim=1).to(device)
    return ids
"""


def test_a_host_copy_around_a_compiled_model_on_xla_waits_for_the_lazy_graph():
    assert found(XLA_DECODE.replace("{EAGER}", ""), ("HPU005",)) == [("HPU005", 12)]


def test_with_pytorch_xla_eager_mode_on_the_loop_runs_eagerly():
    src = XLA_DECODE.replace("{EAGER}", "torch_xla.experimental.eager_mode(True)")
    assert found(src, ("HPU005",)) == []


LOG_RETURN = """
import torch
import habana_frameworks.torch.core as htcore


class Trainer:
    def __init__(self, model, opt, log_every):
        self.model, self.opt, self.log_every = model, opt, log_every

    def report(self, step, loss):
        should_log = step % self.log_every == 0
        if not {FLAG}:
            return
        print(f"step {step} loss {loss.item():.4f}")

    def fit(self, loader):
        for step, (x, y) in enumerate(loader):
            loss = torch.nn.functional.mse_loss(self.model(x), y)
            loss.backward()
            self.opt.step()
            htcore.mark_step()
            self.report(step, loss)
"""


def test_an_early_return_unless_logging_guards_the_rest_of_the_function():
    assert found(LOG_RETURN.replace("{FLAG}", "should_log"), ("HPU005",)) == []


def test_an_early_return_on_another_test_guards_nothing():
    assert found(LOG_RETURN.replace("{FLAG}", "self.model.training"), ("HPU005",)) == [("HPU005", 14)]


TRAINER_BUFFER = """
import torch
from torch import nn
import habana_frameworks.torch.core as htcore


class Trainer(nn.Module):
    def __init__(self, model, opt, total):
        super().__init__()
        self.model = model.to("hpu")
        self.opt = opt
        self.total = total
        self.register_buffer("steps", torch.tensor(0))
        {MOVE}

    def train_step(self, batch):
        step = int(self.steps.item())
        loss = self.model(batch).mean()
        loss.backward()
        self.opt.step()
        htcore.mark_step()
        self.steps += 1
        return step

    def train(self, loader):
        for batch in loader:
            self.train_step(batch)
"""


def test_a_trainer_modules_own_step_buffer_stays_in_host_memory():
    assert found(TRAINER_BUFFER.replace("{MOVE}", ""), ("HPU005",)) == []


def test_a_trainer_module_moved_to_the_device_moves_its_buffer_too():
    assert found(TRAINER_BUFFER.replace("{MOVE}", 'self.to("hpu")'), ("HPU005",)) == [("HPU005", 17)]


def test_a_loss_picked_from_a_one_entry_registry_in_another_file_is_a_tensor(tmp_path, capsys, monkeypatch):
    files = {
        "losses.py": """
            import torch


            def noise_loss(model, x, t):
                return (model(x, t) - x).square().mean()


            LOSSES = {"simple": noise_loss}
        """,
        "train.py": """
            import torch
            import habana_frameworks.torch.core as htcore
            from losses import LOSSES


            def train(model, opt, loader, writer, kind):
                for step, x in enumerate(loader):
                    t = torch.randint(0, 1000, (x.shape[0],), device=x.device)
                    loss = LOSSES[kind](model, x, t)
                    writer.add_scalar("loss", loss, global_step=step)
                    loss.backward()
                    htcore.mark_step()
                    opt.step()
                    htcore.mark_step()
        """,
    }
    assert lint(tmp_path, files, capsys, monkeypatch) == ["train.py:11:9:HPU005"]


ACCUMULATION = """
import torch
import torch.distributed as dist
import habana_frameworks.torch.core as htcore


def mean_over_ranks(x):
    t = torch.tensor(x, device="hpu")
    dist.all_reduce(t)
    return t.item()


def train(model, opt, loader, accum):
    for i, batch in enumerate(loader):
        loss = model(batch).mean() / accum
        loss.backward()
        {FLAG} = (i + 1) % accum == 0
        if {FLAG}:
            opt.step()
            opt.zero_grad()
        htcore.mark_step()
        if {TESTED}:
            print(mean_over_ranks(loss.detach()))
"""


def test_the_accumulation_flag_tested_again_is_no_logging_interval():
    src = ACCUMULATION.replace("{FLAG}", "is_update_step").replace("{TESTED}", "is_update_step")
    assert found(src, ("HPU005",)) == [("HPU005", 10)]


def test_a_logging_flag_that_guards_no_optimizer_step_is_one():
    src = (ACCUMULATION.replace("{FLAG}", "is_update_step").replace("{TESTED}", "log_now")
           .replace("        htcore.mark_step()\n", "        htcore.mark_step()\n        log_now = i % 100 == 0\n"))
    assert found(src, ("HPU005",)) == []


CAST = """
from typing import cast
import torch
from torch import nn
import habana_frameworks.torch.core as htcore


class Net(nn.Module):
    def forward(self, x):
        return x * 2

    def masks(self, positions):
        return int(positions.max().item())


class Other(nn.Module):
    def masks(self, positions):
        return 0

    def forward(self, x):
        return x


class Runner:
    def __init__(self, parts):
        self.parts = parts

    def step(self, x, positions):
        model = cast({CLASS}, self.parts[0])
        n = model.masks(positions)
        htcore.mark_step()
        return n

    def run(self, loader, opt):
        for x, positions in loader:
            self.step(x, positions)
            opt.step()
"""


def test_typing_cast_to_a_project_class_reaches_its_methods():
    assert found(CAST.replace("{CLASS}", "Net"), ("HPU005",)) == [("HPU005", 13)]


def test_typing_cast_to_another_class_reaches_that_ones():
    assert found(CAST.replace("{CLASS}", "Other"), ("HPU005",)) == []


KERNEL = """
import torch
from torch.nn.attention.flex_attention import flex_attention

_flex = torch.compile({COMPILED})


def lengths(positions):
    return int((positions == 0).sum().item())


def train(model, opt, loader):
    for x, positions in loader:
        n = lengths(positions)
        loss = model(x, n).mean()
        loss.backward()
        opt.step()
"""


def test_a_torch_kernel_compiled_in_the_file_leaves_its_code_where_it_ran():
    assert found(KERNEL.replace("{COMPILED}", "flex_attention"), ("HPU005",)) == [("HPU005", 9)]


def test_a_file_that_compiles_its_own_function_runs_eagerly():
    assert found(KERNEL.replace("{COMPILED}", "lengths"), ("HPU005",)) == []


DROPPED = """
import time
import torch
import torch_xla


def bench(model, batch, n):
    device = torch_xla.device()
    model = model.to(device)
    for _ in range(n):
        start = time.perf_counter()
        output = model(batch.to(device))
        {DROP}
        print(time.perf_counter() - start)
"""


def test_a_dropped_host_copy_of_a_models_output_still_waits_for_the_device():
    assert found(DROPPED.replace("{DROP}", 'output.to("cpu")'), ("HPU005",)) == [("HPU005", 13)]


def test_a_dropped_move_of_a_model_is_no_host_read():
    assert found(DROPPED.replace("{DROP}", 'model.cpu()'), ("HPU005",)) == []


SCHEDULES = {
    "schedules.py": """
        def interleaved(step_fn, batches, model):
            raise NotImplementedError("pipeline stages only")


        def no_pipelining(step_fn, batches, model):
            losses = []
            for batch in batches:
                losses.append(step_fn(batch, model))
            return losses


        def get_schedule(stages):
            if stages > 1:
                return interleaved
            return no_pipelining
    """,
    "training.py": """
        import habana_frameworks.torch.core as htcore
        from schedules import get_schedule


        def train(step_fn, model, opt, loader, stages):
            for batches in loader:
                run = get_schedule(stages)
                losses = run(step_fn, batches, model)
                sum(losses).backward()
                htcore.mark_step()
                opt.step()
                htcore.mark_step()
    """,
    "pretrain.py": """
        import torch
        from training import train


        def forward_step(batch, model):
            tokens = batch["tokens"].to("hpu")
            tokens[{MASK}] = 0
            return model(tokens).mean()


        def main(model, opt, loader):
            train(forward_step, model, opt, loader, stages=1)
    """,
}


def test_a_step_function_run_by_any_schedule_a_helper_returns_is_hot(tmp_path, capsys, monkeypatch):
    files = dict(SCHEDULES, **{"pretrain.py": SCHEDULES["pretrain.py"].replace("{MASK}", "tokens == -1")})
    assert lint(tmp_path, files, capsys, monkeypatch) == ["pretrain.py:8:5:HPU006"]


def test_the_same_step_function_storing_at_a_fixed_position_is_quiet(tmp_path, capsys, monkeypatch):
    files = dict(SCHEDULES, **{"pretrain.py": SCHEDULES["pretrain.py"].replace("{MASK}", ":, 0")})
    assert lint(tmp_path, files, capsys, monkeypatch) == []


BLOCK_STATE = """
import torch
import habana_frameworks.torch.core as htcore


class PrepareIds:
    def __call__(self, components, state):
        block_state = self.get_block_state(state)
        {TARGET} = torch.cat([{TARGET}, block_state.extra_ids], dim=1)
        self.set_block_state(state, block_state)
        return components, state
"""


def test_a_field_of_a_state_object_fetched_once_per_call_does_not_grow_across_steps():
    assert found(BLOCK_STATE.replace("{TARGET}", "block_state.position_ids"), ("HPU003",)) == []


def test_a_field_of_the_object_itself_grows_on_every_call():
    assert found(BLOCK_STATE.replace("{TARGET}", "self.position_ids"), ("HPU003",)) == [("HPU003", 9)]


MESHGRID = """
import torch
import habana_frameworks.torch.core as htcore


def rope(sizes):
    grid = torch.stack(torch.meshgrid(*[torch.arange(s{DEVICE}) for s in sizes], indexing="ij"), dim=0)
    return int(grid.view(-1).max().item())


def train(model, loader, opt):
    for x in loader:
        n = rope([2, 3])
        loss = model(x, n).mean()
        loss.backward()
        htcore.mark_step()
        opt.step()
        htcore.mark_step()
"""


def test_a_meshgrid_of_host_ranges_stays_on_the_host():
    assert found(MESHGRID.replace("{DEVICE}", ""), ("HPU005",)) == []


def test_a_meshgrid_of_device_ranges_is_on_the_device():
    assert found(MESHGRID.replace("{DEVICE}", ', device="hpu"'), ("HPU005",)) == [("HPU005", 8)]
