"""Kinds the sixteenth held-out set showed wrong, once its misses were read
(tests/data/real_code_notes.md): a training step hook that samples a preview every few steps, and
Weights & Biases converting the tensors it is given. Each has a look-alike that stays quiet.

The cases are written for these tests; none is copied from a repository.
"""
from __future__ import annotations

from snippets import found


# a Lightning denoiser that, every few thousand steps, samples a preview with its EMA copy:
# the sampling run is behind a test, the rest of the hook runs on every training step
PREVIEW = """
import torch
import lightning as L


class Sampler:
    def __init__(self, net):
        self.net = net

    def generate(self, x, steps=20):
        for t in range(steps):
            x = x - self.net(x, torch.full((x.shape[0],), t / steps, device=x.device))
        return x


class Denoiser(L.LightningModule):
    def __init__(self, net):
        super().__init__()
        self.net = net
        self.sampler = Sampler(net)

    def training_step(self, batch, batch_idx):
        x = batch["images"]
        loss = (self.net(x, torch.rand(x.shape[0], device=x.device)) - x).pow(2).mean()
        self.log("train/loss", loss.item())
        if self.global_step % 5000 == 0:
            preview = self.sampler.generate(torch.randn_like(x))
            self.log("preview/mean", preview.mean())
        return loss
"""


def test_a_training_step_that_samples_a_preview_still_runs_every_step():
    assert found(PREVIEW, ("HPU005",)) == [("HPU005", 25)]


def test_a_validation_step_that_samples_is_a_run():
    # an evaluation hook that samples is a whole sampling run per call: its body is per run
    src = PREVIEW.replace("def training_step(", "def validation_step(")
    assert found(src, ("HPU005",)) == []


WANDB = """
import torch
import wandb


def train(model, loader, optimizer, use_wandb):
    for step, (x, y) in enumerate(loader):
        loss = torch.nn.functional.mse_loss(model(x.to("cuda")), y.to("cuda"))
        loss.backward()
        optimizer.step()
        if use_wandb:
            wandb.log({
                "loss": loss,
                "step": step,
            })
"""


def test_wandb_converts_the_tensors_it_is_given():
    assert found(WANDB, ("HPU005",)) == [("HPU005", 13)]


def test_wandb_given_python_numbers_reads_nothing():
    src = WANDB.replace('"loss": loss,', '"lr": optimizer.param_groups[0]["lr"],')
    assert found(src, ("HPU005",)) == []


def test_wandb_at_a_logging_interval_stays_quiet():
    src = WANDB.replace("if use_wandb:", "if step % 100 == 0:")
    assert found(src, ("HPU005",)) == []


# a training step hook (its body runs every step, see above) that checks the batch's static length
# against a setting of its configuration, a dict that happens to be named `model`
CONFIG = """
import torch
import lightning as L


class Pretrain(L.LightningModule):
    def __init__(self, cfg):
        super().__init__()
        self.config = cfg

    def training_step(self, batch, batch_idx):
        ids = batch["input_ids"].to("cuda")
        assert ids.shape[1] == self.config.model.get("seq_length"), "bad data"
        loss = self.net(ids).mean()
        if self.global_step % 1000 == 0:
            self.preview = self.sampler.generate(ids)
        return loss
"""


def test_a_configuration_named_model_read_with_get_is_no_model_output():
    assert found(CONFIG, ("HPU008",)) == []


def test_a_model_output_compared_in_the_same_assert_is_still_read():
    src = CONFIG.replace('self.config.model.get("seq_length")', 'self.net(ids).argmax()')
    assert found(src, ("HPU008",)) == [("HPU008", 13)]
