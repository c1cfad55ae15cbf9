"""Links across the files of a project that the dev set showed missing (tests/data/real_code_notes.md):
a package under src/ imported by a script beside it, a model compiled by one script and used in
lazy mode by another, a base class's call of a method that a subclass overrides, and
`itertools.islice` of a loader. Each look-alike (quiet) has a twin of the same shape (reported).

The cases are written for these tests; none is copied from a repository.
"""
from __future__ import annotations


from snippets import lint_project as lint



PIPELINE = """
class TextPipeline:
    @classmethod
    def from_pretrained(cls, name):
        return cls()

    def to(self, device):
        return self

    def encode(self, batch):
        return batch
"""

TRAIN = """
import torch
import habana_frameworks.torch.core as htcore
from textlib import TextPipeline


def main(model, loader, opt, offload):
    pipe = TextPipeline.from_pretrained("name")
    for batch in loader:
        pipe = pipe.to("hpu")
        emb = pipe.encode(batch)
        if offload:
            pipe = pipe.to("cpu")
        loss = model(batch, emb).mean()
        loss.backward()
        htcore.mark_step()
        opt.step()
        htcore.mark_step()
        last = loss.to("cpu")
"""


def test_a_package_under_src_is_the_one_a_script_beside_it_imports(tmp_path, capsys, monkeypatch):
    # src/textlib/ without src/__init__.py: `from textlib import ...` in train.py names it, so the
    # pipeline moved to the CPU is a project object, not a tensor; the loss moved there still is
    found = lint(tmp_path, {"src/textlib/__init__.py": PIPELINE, "train.py": TRAIN}, capsys, monkeypatch)
    assert found == ["train.py:19:16:HPU005"]


def test_without_the_package_the_pipeline_is_unknown_and_its_move_reported(tmp_path, capsys, monkeypatch):
    found = lint(tmp_path, {"train.py": TRAIN}, capsys, monkeypatch)
    assert found == ["train.py:13:20:HPU005", "train.py:19:16:HPU005"]


MODEL = """
import torch


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = torch.nn.Linear(4, 4)

    def forward(self, x):
        return self.fc(x)
"""

COMPILED = """
import torch
from net import Net

model = torch.compile(Net())
"""

LAZY = """
import torch
from net import Net


def evaluate(loader, device):
    model = Net().to(device)
    losses = []
    for x in loader:
        loss = model(x.to(device)).sum()
        losses.append(loss.item())
    return losses
"""


def test_a_model_compiled_by_one_script_runs_lazily_in_another(tmp_path, capsys, monkeypatch):
    # bench.py compiles Net; evaluate.py (device-neutral) calls Net itself, not the compiled
    # wrapper: it does not run eagerly next to compiled code, and its per-batch read is a host
    # sync on a lazy device
    found = lint(tmp_path, {"net.py": MODEL, "bench.py": COMPILED, "evaluate.py": LAZY}, capsys, monkeypatch)
    assert found == ["evaluate.py:11:23:HPU005"]


BASE = """
import torch
import torch_xla.core.xla_model as xm
import torch_xla.distributed.parallel_loader as pl


class Base:
    def __init__(self, model, loader, opt):
        self.model = model
        self.opt = opt
        self.loader = {loader}

    def train_loop_fn(self, loader):
        for data in loader:
            self.model(data).sum().backward()
            self.opt.step()
            xm.mark_step()

    def start(self):
        for epoch in range(3):
            self.train_loop_fn(self.loader)
"""

SUB = """
import itertools

import torch_xla
from base import Base


class Amp(Base):
    def train_loop_fn(self, loader):
        loader = itertools.islice(loader, 10)
        for step, data in enumerate(loader):
            self.model(data).sum().backward()
            self.opt.step()
"""


def test_an_override_gets_what_the_base_class_passes_to_it(tmp_path, capsys, monkeypatch):
    # Base.start calls self.train_loop_fn(self.loader): for an Amp, that is Amp's override, and
    # its loader (the first batches of an MpDeviceLoader) marks every step
    marking = BASE.format(loader="pl.MpDeviceLoader(loader, xm.xla_device())")
    assert lint(tmp_path, {"base.py": marking, "amp.py": SUB}, capsys, monkeypatch) == []


def test_an_override_given_a_plain_loader_still_misses_its_markers(tmp_path, capsys, monkeypatch):
    found = lint(tmp_path, {"base.py": BASE.format(loader="loader"), "amp.py": SUB}, capsys, monkeypatch)
    assert found == ["amp.py:11:9:HPU004"]


CHECKPOINT = """
import torch
import torch_xla.core.xla_model as xm


class Saver:
    def save_state(self, path):
        xm.mark_step()  # let pending work finish before reading the weights
        torch.save({}, path)
"""

EPOCHS = """
import torch
from saver import Saver


def train(model, loader, opt, epochs, save_every):
    saver = Saver()
    for epoch in range(epochs):
        total = 0.0
        for step, batch in enumerate(loader):
            loss = model(batch).mean()
            loss.backward()
            opt.step()
            total += loss.detach()
            if save_every == "step":
                saver.save_state(f"step_{step}")
            print(loss.item())
        print(f"epoch {epoch}: {total.item()}")
        saver.save_state(f"epoch_{epoch}")
"""


def test_a_checkpoint_helper_that_marks_does_not_make_the_epoch_one_step(tmp_path, capsys, monkeypatch):
    # the epoch loop holds the training loop: the per-step read is reported, the per-epoch one
    # (after the training loop) is not, though save_state() marks a step
    found = lint(tmp_path, {"saver.py": CHECKPOINT, "train.py": EPOCHS}, capsys, monkeypatch)
    assert found == ["train.py:17:19:HPU005"]
