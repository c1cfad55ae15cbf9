"""Kinds found missing in round 26 (the twenty-fifth held-out set), once read. Each has a
look-alike, or the hazard it must keep, beside it.

The cases are written for these tests; none is copied from a repository.
"""
from __future__ import annotations

from snippets import found, lint_project

# a speculative decoder whose draft and target models run through graphs captured once and replayed
# (CUDA graphs here; `htorch.hpu.HPUGraph` the same): each replay runs the captured model
ENGINE = """
import torch


def capture(model, width):
    static = torch.zeros(1, width, dtype=torch.long)
    graph = {graph}
    with torch.cuda.graph(graph):
        out = model(static)

    def run(ids):
        static.copy_(ids)
        graph.replay()
        return out.clone()

    return run


class Engine:
    def __init__(self, model):
        self.verify = capture(model, 8)

    def graph_verify(self, ids):
        return self.verify(ids)
"""

DECODE = """
import torch

from engine import Engine


def draft(engine, tokens, gamma):
    n = 0
    out = []
    while n < gamma:
        probs = engine.graph_verify(tokens[:, :n + 1])
        tok = torch.multinomial(probs[0], 1)
        out.append(tok.item())
        n += 1
    return out


def main(model):
    engine = Engine(model)
    print(draft(engine, torch.zeros(1, 8, dtype=torch.long), 4))
"""


def test_a_loop_that_replays_a_captured_graph_is_a_step_loop(tmp_path, capsys, monkeypatch):
    got = lint_project(tmp_path, {"engine.py": ENGINE.format(graph="torch.cuda.CUDAGraph()"),
                                  "decode.py": DECODE}, capsys, monkeypatch)
    assert got == ["decode.py:11:37:HPU001", "decode.py:13:20:HPU005"]


def test_a_replay_of_something_else_is_no_model_run(tmp_path, capsys, monkeypatch):
    got = lint_project(tmp_path, {"engine.py": ENGINE.format(graph="Recorder()"),
                                  "decode.py": DECODE}, capsys, monkeypatch)
    assert got == []


# the entry scripts of a research repository kept in a `test/` folder that holds no test: they
# are scripts (they build the engine and call the decoder), linted and indexed
SCRIPT = """
import torch

from decode import draft
from engine import Engine

engine = Engine(torch.nn.Linear(8, 8))
print(draft(engine, torch.zeros(1, 8, dtype=torch.long), 4))
"""

PLAIN_DECODE = DECODE.replace("from engine import Engine\n", "").split("\ndef main")[0]


def test_scripts_in_a_test_folder_without_tests_are_linted_and_indexed(tmp_path, capsys, monkeypatch):
    got = lint_project(tmp_path, {"engine.py": ENGINE.format(graph="torch.cuda.CUDAGraph()"),
                                  "decode.py": PLAIN_DECODE, "test/run_spec.py": SCRIPT}, capsys, monkeypatch)
    assert got == ["decode.py:10:37:HPU001", "decode.py:12:20:HPU005"]


def test_a_test_folder_with_a_test_in_it_stays_test_code(tmp_path, capsys, monkeypatch):
    files = {"engine.py": ENGINE.format(graph="torch.cuda.CUDAGraph()"), "decode.py": PLAIN_DECODE,
             "test/run_spec.py": SCRIPT, "test/test_decode.py": "def test_draft():\n    pass\n"}
    assert lint_project(tmp_path, files, capsys, monkeypatch) == []


# a DDIM sampler over a schedule the module registers as buffers by name in a loop
# (`self.register_buffer(k, v)`): the elements it reads by the step counter go through tensor-only
# methods (`.sqrt()`), so they are tensors' elements
DDIM = """
import torch
from torch import nn


class Sampler(nn.Module):
    def __init__(self, eps_model, schedules):
        super().__init__()
        self.eps_model = eps_model
        for k, v in schedules.items():
            self.register_buffer(k, v)

    def sample(self, n, size, device):
        x = torch.randn(n, *size, device=device)
        for i in range(self.n_T, 1, -1):
            eps = self.eps_model(x, torch.tensor(i / self.n_T, device=device).repeat(n, 1))
            x0 = (x - eps * {math}) / 2
            x = x0 + eps
        return x
"""


def test_a_schedule_element_a_tensor_method_is_called_on_is_a_tensor_element():
    assert found(DDIM.format(math="(1 - self.abar[i]).sqrt()"), ("HPU001",)) == [("HPU001", 17)]
    assert found(DDIM.format(math="((1 - self.abar[i - 1]) - 0.5 ** 2).sqrt()"), ("HPU001",)) == [("HPU001", 17)]


# the same method on elements read by a loop that runs no step (the coefficients computed once)
COEFFS = """
import torch
from torch import nn


class Sampler(nn.Module):
    def __init__(self, abar):
        super().__init__()
        self.coeffs = []
        for i in range(1, len(abar)):
            self.coeffs.append(((1 - abar[i - 1]) / (1 - abar[i])).sqrt())
"""


def test_a_tensor_method_on_elements_read_by_a_loop_that_runs_no_step_is_not_reported():
    assert found(COEFFS, ("HPU001",)) == []


# speculative sampling: each accepted draft token is joined onto the sequence inside the loop over
# the lookahead tokens, and the round loop (which runs both models) feeds the grown sequence to
# the next round
SPEC = """
import torch


def speculative(target_model, draft_model, seq, target_len, lookahead=4):
    n = seq.shape[-1]
    while n < target_len:
{fresh}        draft = draft_model(seq)
        logits = target_model(draft)
        for t in range(lookahead):
            if (torch.rand(1) < logits[0, t, 0]).any():
                seq = torch.cat([seq, draft[:, t:t + 1]], dim=-1)
                n += 1
        n += 1
    return seq
"""


def test_a_sequence_grown_in_an_inner_loop_and_carried_by_the_step_loop_grows_every_step():
    assert found(SPEC.format(fresh=""), ("HPU003",)) == [("HPU003", 12)]


def test_a_sequence_bound_afresh_in_each_step_and_grown_in_an_inner_loop_does_not():
    assert found(SPEC.format(fresh="        seq = draft_model.prefix(n)\n"), ("HPU003",)) == []


# an autoregressive video sampler: each frame is denoised by a sampling loop, then joined onto the
# history the next frame reads; the frame counter bounds the action window it passes the model
FRAMES = """
import torch


def sample(model, history, actions, num_frames, steps):
    dt = 1.0 / steps
    for frame_idx in range({frames}):
        acts = actions[:, frame_idx:frame_idx + 8]
        x = torch.randn_like(history[:, -1:])
        for step_idx in range(steps):
            x = x - dt * model(torch.cat([history[:, -7:], x], 1), acts)
        history = {join}
    return history
"""


def test_a_frame_loop_that_runs_a_sampling_loop_and_carries_the_history_is_a_step_loop():
    got = found(FRAMES.format(frames="num_frames", join="torch.cat([history, x], dim=1)"), ("HPU001", "HPU003"))
    assert got == [("HPU001", 8), ("HPU003", 12)]


def test_a_loop_over_prompts_that_runs_a_sampling_loop_each_carries_nothing_and_is_not():
    src = FRAMES.format(frames="num_frames", join="x").replace("history[:, -7:]", "actions[:, :7]").replace(
        "torch.randn_like(history[:, -1:])", "torch.randn(1, 1)")
    assert found(src, ("HPU001", "HPU003")) == []


# the closure reads the running history every pass: collecting the frames in a list would hand it
# the first history forever, so the growing join keeps no fix
CLOSURE = """
import torch


def sample(model, history, num_frames, steps):
    def window():
        return history[:, -4:].clone()

    for frame_idx in range(num_frames):
        x = window()
        for step_idx in range(steps):
            x = x - 0.1 * model(x)
        history = torch.cat([history, x[:, -1:]], dim=1)
    return history
"""


def test_an_accumulator_a_nested_function_reads_gets_no_list_fix():
    from hpulint.engine import lint_source

    got = [f for f in lint_source(CLOSURE, "run.py") if f.code == "HPU003"]
    assert [(f.code, f.line) for f in got] == [("HPU003", 13)]
    assert all(f.fix is None for f in got)


# an XLA training loop over a plain DataLoader whose batch the target unpacks and the body moves to
# the device, in a project that builds a ParallelLoader elsewhere: the loader gives host tensors
# and marks nothing, and xm.optimizer_step without barrier=True marks nothing either
XLA_TRAIN = """
import torch
import torch_xla.core.xla_model as xm


def train(model, criterion, optimizer, train_loader, device):
    for b, (x, y) in enumerate(train_loader):
        x, y = {move}
        loss = criterion(model(x), y)
        optimizer.zero_grad()
        loss.backward()
        xm.optimizer_step(optimizer)
"""

XLA_MAIN = """
from torch.utils.data import DataLoader
import torch_xla.distributed.parallel_loader as pl

from train import train


def run(model, criterion, optimizer, data, eval_data, device):
    train(model, criterion, optimizer, DataLoader(data, batch_size=8, drop_last=True), device)
    for batch in pl.MpDeviceLoader(DataLoader(eval_data, batch_size=8), device):
        model(batch)
"""


def test_a_training_loop_that_moves_its_unpacked_batch_iterates_a_loader_that_marks_nothing(tmp_path, capsys,
                                                                                             monkeypatch):
    got = lint_project(tmp_path, {"train.py": XLA_TRAIN.format(move="x.to(device), y.to(device)"),
                                  "main.py": XLA_MAIN}, capsys, monkeypatch)
    assert got == ["train.py:7:5:HPU004"]


def test_one_that_moves_nothing_may_iterate_the_projects_marking_loader(tmp_path, capsys, monkeypatch):
    got = lint_project(tmp_path, {"train.py": XLA_TRAIN.format(move="x, y"), "main.py": XLA_MAIN},
                       capsys, monkeypatch)
    assert got == []


# the same loop over a ParallelLoader's per-device loader on TPU (through tqdm): it marks the step,
# whatever the body moves
XLA_TQDM = """
import torch_xla.core.xla_model as xm
import torch_xla.distributed.parallel_loader as pl
from tqdm import tqdm


class Trainer:
    def train(self):
        if self.use_tpu:
            loader = pl.ParallelLoader(self.train_loader, [self.device]).per_device_loader(self.device)
        else:
            loader = self.train_loader
        tbar = tqdm(loader)
        for i, (data, mask) in enumerate(tbar):
            data, mask = data.to(self.device), mask.to(self.device)
            loss = self.loss_fn(self.model(data), mask)
            self.optimizer.zero_grad()
            loss.backward()
            xm.optimizer_step(self.optimizer)
"""


def test_a_loop_over_a_per_device_loader_through_tqdm_marks_its_steps():
    assert found(XLA_TQDM, ("HPU004",)) == []


def test_a_loop_handed_a_per_device_loader_that_moves_its_batch_again_is_not_reported(tmp_path, capsys,
                                                                                        monkeypatch):
    main = XLA_MAIN.replace("DataLoader(data, batch_size=8, drop_last=True)",
                            "pl.MpDeviceLoader(DataLoader(data, batch_size=8, drop_last=True), device)")
    got = lint_project(tmp_path, {"train.py": XLA_TRAIN.format(move="x.to(device), y.to(device)"),
                                  "main.py": main}, capsys, monkeypatch)
    assert got == []


def test_each_tensor_of_a_list_padded_in_an_inner_loop_is_not_one_accumulator():
    src = SPEC.format(fresh="").replace("seq = torch.cat([seq, draft[:, t:t + 1]], dim=-1)",
                                        "pads[t] = torch.cat([pads[t], draft[:, t:t + 1]], dim=-1)")
    src = src.replace("    n = seq.shape[-1]\n", "    n = seq.shape[-1]\n    pads = [seq] * lookahead\n")
    assert found(src, ("HPU003",)) == []


# `str.format` of the loss in the training loop reads it on the host, as an f-string does
FORMAT = """
import torch
import torch_xla.core.xla_model as xm


def train(model, loader, optimizer):
    for step, batch in enumerate(loader):
        loss = model(batch)
        loss.backward()
        xm.master_print("step:{{}} loss:{{}}".format(step, {arg}))
        optimizer.step()
        xm.mark_step()
"""


def test_str_format_of_a_device_tensor_in_a_step_loop_reads_it():
    assert found(FORMAT.format(arg="loss"), ("HPU005",)) == [("HPU005", 10)]


def test_str_format_of_host_numbers_does_not():
    assert found(FORMAT.format(arg="step * 2"), ("HPU005",)) == []


def test_a_loop_over_codebooks_that_hands_each_stage_to_a_sampling_run_is_not_a_step_loop():
    # (its own body neither slices with its counter nor grows what it carries: the same stages on
    # every run)
    src = """
import torch


def sample_stage(model, seq, stage, steps):
    for t in range(steps):
        seq = seq + model(seq, stage)
    return seq


def generate(model, seq, codebooks, steps):
    for stage in range(codebooks):
        seq = sample_stage(model, seq, stage, steps)
    return seq
"""
    assert found(src, ("HPU001", "HPU003")) == []


# a debugging helper that prints each parameter's norm: its loop reads the name `norm` only as
# `torch.linalg.norm`, so it carries nothing from pass to pass (no iterative loop on the device)
NORMS = """
import torch
import torch_xla.core.xla_model as xm


def print_norms(params):
    text = ""
    for p in params:
        {line}
        text += "{{:.6E}}\\n".format(norm)
    print(text)
"""


def test_a_name_read_only_after_a_dot_is_not_carried_from_the_last_pass():
    assert found(NORMS.format(line="norm = torch.linalg.norm(p.data)"), ("HPU005",)) == []


def test_a_name_the_pass_reads_before_it_binds_it_is_carried():
    assert found(NORMS.format(line="norm = norm * 0.9 + torch.linalg.norm(p.data)"), ("HPU005",)) == [("HPU005", 10)]


# an image logger that walks the dict of sampled images by key and names each file after the key
LOGGER = """
import torch
import torch_xla.core.xla_model as xm


def log_images(images, step):
    for k in images:
        img = images[k].float()
        name = "{{}}_gs-{{:06}}.png".format({arg}, step)
        torch.save(img, name)


def train(model, loader, optimizer):
    for step, batch in enumerate(loader):
        loss = model(batch)
        loss.backward()
        optimizer.step()
        log_images(model.sample(batch), step)
        xm.mark_step()
"""


def test_the_target_of_a_loop_that_indexes_what_it_iterates_is_a_key_not_a_tensor():
    assert found(LOGGER.format(arg="k"), ("HPU005",)) == []
    assert found(LOGGER.format(arg="img"), ("HPU005",)) == [("HPU005", 9)]


# a pipeline's per-sample preparation: each sample's reference images are encoded by the VAE in a
# nested loop, and the loop keeps a running maximum of patch counts (a number, not a tensor): once
# per call, not a step loop
PREPARE = """
import torch


class Pipeline:
    def prepare(self, latents: torch.Tensor, refs, batch_size):
        out, max_patches = [], 0
        for i in range(batch_size):
            items = [latents[i].to(self.device)]
            for img in refs[i]:
                items.append(self.vae.encode(img).latent_dist.mode())
            patches = torch.cat(items, dim=0)
            if patches.shape[0] > max_patches:
                max_patches = patches.shape[0]
            out.append(patches)
        return out, max_patches
"""


def test_a_preparation_loop_that_carries_only_a_running_maximum_is_not_a_step_loop():
    assert found(PREPARE, ("HPU001",)) == []
