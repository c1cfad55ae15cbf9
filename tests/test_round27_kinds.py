"""Kinds found in round 27 (hand-read whole repositories, the twenty-seventh held-out set), once
read. Each has a look-alike, or the hazard it must keep, beside it.

The cases are written for these tests; none is copied from a repository.
"""
from __future__ import annotations

from snippets import lint_project

# a repository of Gaudi models that keeps an unported sampler: it moves its schedule to CUDA
# (`.to(torch.device("cuda"))` whatever the tensor's device), so without Gaudi's GPU Migration
# toolkit it cannot run on the hpu; the ported sampler beside it follows the model's device
CUDA_SAMPLER = """
import torch


class CudaSampler:
    def __init__(self, model, steps):
        self.model = model
        self.register("alphas", torch.linspace(0.9, 0.1, steps))

    def register(self, name, value):
        if value.device != torch.device("cuda"):
            value = value.to(torch.device("cuda"))
        setattr(self, name, value)

    def sample(self, x, steps):
        for i in range(steps):
            eps = self.model(x)

            def update(e, index):
                a = self.alphas[index]
                return x - a * e

            x = update(eps, steps - i - 1)
        return x
"""

PORTED_SAMPLER = CUDA_SAMPLER.replace("CudaSampler", "HpuSampler").replace(
    """        if value.device != torch.device("cuda"):
            value = value.to(torch.device("cuda"))""",
    """        value = value.to(self.model.device)""")

# an offline metric script hard-wired to CUDA (`.to("cuda")` on the network, `.cuda()` on each input)
METRIC = """
import torch


def score(pairs, net):
    net = net.to("cuda")
    total = 0.0
    for a, b in pairs:
        d = net(a.cuda()) - net(b.cuda())
        total += d.abs().mean().item()
    return total / len(pairs)
"""

# the same metric choosing its device: device-neutral, so it is checked
METRIC_CHOOSING = METRIC.replace('net = net.to("cuda")', 'if torch.cuda.is_available():\n        net = net.to("cuda")') \
    .replace("net(a.cuda()) - net(b.cuda())", "net(a) - net(b)")

TRAIN = """
import habana_frameworks.torch.core as htcore
import torch


def train(model, loader, opt):
    for x, y in loader:
        loss = torch.nn.functional.mse_loss(model(x.to("hpu")), y.to("hpu"))
        loss.backward()
        htcore.mark_step()
        opt.step()
        htcore.mark_step()
"""


def test_code_written_for_cuda_in_a_gaudi_project_is_not_checked(tmp_path, capsys, monkeypatch):
    files = {"train.py": TRAIN, "samplers/cuda_sampler.py": CUDA_SAMPLER,
             "samplers/hpu_sampler.py": PORTED_SAMPLER, "metrics.py": METRIC}
    got = lint_project(tmp_path, files, capsys, monkeypatch)
    assert got == ["samplers/hpu_sampler.py:19:21:HPU001"]


def test_a_metric_that_chooses_its_device_is_checked(tmp_path, capsys, monkeypatch):
    got = lint_project(tmp_path, {"train.py": TRAIN, "metrics.py": METRIC_CHOOSING}, capsys, monkeypatch)
    assert got == ["metrics.py:11:18:HPU005"]


def test_under_gpu_migration_cuda_code_runs_on_the_hpu(tmp_path, capsys, monkeypatch):
    migrated = TRAIN.replace("import habana_frameworks.torch.core as htcore\n",
                             "import habana_frameworks.torch.gpu_migration\nimport habana_frameworks.torch.core as htcore\n")
    files = {"train.py": migrated, "samplers/cuda_sampler.py": CUDA_SAMPLER, "metrics.py": METRIC}
    got = lint_project(tmp_path, files, capsys, monkeypatch)
    assert got == ["metrics.py:10:18:HPU005", "samplers/cuda_sampler.py:20:21:HPU001"]


def test_gpu_migration_counts_only_in_its_own_model_folder(tmp_path, capsys, monkeypatch):
    # two model folders of one repository (each with its requirements.txt): the migrated one's
    # import says nothing about the other's CUDA code
    migrated = TRAIN.replace("import habana_frameworks.torch.core as htcore\n",
                             "import habana_frameworks.torch.gpu_migration\nimport habana_frameworks.torch.core as htcore\n")
    files = {"migrated/requirements.txt": "", "migrated/train.py": migrated, "migrated/metrics.py": METRIC,
             "ported/requirements.txt": "", "ported/train.py": TRAIN, "ported/metrics.py": METRIC}
    got = lint_project(tmp_path, files, capsys, monkeypatch)
    assert got == ["migrated/metrics.py:10:18:HPU005"]


def test_a_cuda_project_with_no_lazy_device_is_still_checked(tmp_path, capsys, monkeypatch):
    # nothing in the project targets a lazy device: the code may be ported later, so it is checked
    got = lint_project(tmp_path, {"metrics.py": METRIC, "samplers/cuda_sampler.py": CUDA_SAMPLER},
                       capsys, monkeypatch)
    assert got == ["metrics.py:10:18:HPU005", "samplers/cuda_sampler.py:20:21:HPU001"]


# a TPU trainer that logs on an interval or on the first few steps, iterating a name bound to
# `enumerate(...)` on either branch (the counter is the first target all the same)
XLA_LOG = """
import torch
import torch_xla.core.xla_model as xm


def train(model, loader, opt, logger, log_freq, fast):
    if fast:
        batches = enumerate(loader)
    else:
        batches = enumerate(logger.log_every(loader))
    for it, (x, y) in batches:
        loss = model(x, y)
        loss.backward()
        xm.optimizer_step(opt)
        xm.mark_step()
        if it % log_freq == 0 or it {test}:
            logger.update(loss=loss.item())
"""


def test_a_log_on_an_interval_or_the_first_steps_is_a_logging_interval(tmp_path, capsys, monkeypatch):
    got = lint_project(tmp_path, {"train.py": XLA_LOG.format(test="< 5")}, capsys, monkeypatch)
    assert got == []


def test_a_log_on_most_steps_is_no_logging_interval(tmp_path, capsys, monkeypatch):
    # `it < 1000` holds on a thousand steps, and `it >= 5` on all but five
    for test in ("< 1000", ">= 5"):
        got = lint_project(tmp_path, {"train.py": XLA_LOG.format(test=test)}, capsys, monkeypatch)
        assert got == ["train.py:17:32:HPU005"], test


# class-image generation before a DreamBooth run: each pass is a whole pipeline call, and the
# batch's index (a device tensor after `accelerator.prepare`) only names the image file it saves
CLASS_IMAGES = """
import hashlib

import habana_frameworks.torch.core as htcore
from torch.utils.data import DataLoader


def generate(pipeline, dataset, accelerator, out_dir):
    loader = accelerator.prepare(DataLoader(dataset, batch_size=4))
    for example in loader:
        images = pipeline(example["prompt"]).images
        htcore.mark_step()
        for i, image in enumerate(images):
            digest = hashlib.sha1(image.tobytes()).hexdigest()
            name = out_dir / f"{example['index'][i]}-{digest}.jpg"
            USE
"""


def test_a_copy_that_names_the_file_a_pass_saves_is_its_output(tmp_path, capsys, monkeypatch):
    got = lint_project(tmp_path, {"gen.py": CLASS_IMAGES.replace("USE", "image.save(name)")}, capsys, monkeypatch)
    assert got == []


def test_a_copy_formatted_into_a_log_line_is_still_a_read(tmp_path, capsys, monkeypatch):
    got = lint_project(tmp_path, {"gen.py": CLASS_IMAGES.replace("USE", "print(name)")}, capsys, monkeypatch)
    assert got == ["gen.py:15:32:HPU005"]


def test_a_tpu_ports_cuda_trainer_is_still_checked(tmp_path, capsys, monkeypatch):
    # a TPU port keeps its CUDA trainer beside the XLA one: no GPU Migration switch exists there, and
    # the CUDA trainer is the code being ported
    xla_train = TRAIN.replace("import habana_frameworks.torch.core as htcore\n",
                              "import torch_xla.core.xla_model as xm\n").replace("htcore.mark_step()", "xm.mark_step()") \
        .replace('"hpu"', "xm.xla_device()")
    got = lint_project(tmp_path, {"train_tpu.py": xla_train, "metrics.py": METRIC}, capsys, monkeypatch)
    assert got == ["metrics.py:10:18:HPU005"]


def test_a_move_to_cuda_on_one_branch_only_leaves_the_function_checked(tmp_path, capsys, monkeypatch):
    branch = METRIC.replace('    net = net.to("cuda")\n', "").replace(
        "d = net(a.cuda()) - net(b.cuda())", "d = net(a) - net(b)\n        if d.dim() > 3:\n            d = d.cuda()")
    got = lint_project(tmp_path, {"train.py": TRAIN, "metrics.py": branch}, capsys, monkeypatch)
    assert got == ["metrics.py:11:18:HPU005"]


# a sampler library's entry point: `sde` is a parameter nothing in the project passes, and only the
# project's reverse-SDE module defines `mu` (it runs the score network): each pass runs the model
SDE = """
import torch
import torch.nn as nn


class ReverseSDE(nn.Module):
    def __init__(self, score):
        super().__init__()
        self.score = score

    def mu(self, t, y):
        return self.score(y) * t
"""

SAMPLER = """
import torch


def sample(sde, shape, num_steps=20):
    y = torch.randn(shape)
    ts = torch.linspace(0, 1, num_steps + 1).to(y)
    with torch.no_grad():
        for i in range(num_steps):
            y = y + 0.05 * sde.mu(ts[i], y)
    return y
"""

# a plain class of the project defines `mu` too: `sde` may be that one, which runs no model
PLAIN = """
class Schedule:
    def mu(self, t, y):
        return t * y
"""


def test_a_method_only_project_models_define_runs_a_model(tmp_path, capsys, monkeypatch):
    got = lint_project(tmp_path, {"sdes.py": SDE, "sampling.py": SAMPLER}, capsys, monkeypatch)
    assert got == ["sampling.py:10:35:HPU001"]


def test_a_method_a_plain_class_defines_too_says_nothing(tmp_path, capsys, monkeypatch):
    got = lint_project(tmp_path, {"sdes.py": SDE, "schedule.py": PLAIN, "sampling.py": SAMPLER}, capsys, monkeypatch)
    assert got == []


# a GAN's training function, made by a factory and called once per batch: its own loops run the
# discriminator's optimizer steps, and the losses it reads after them are read every batch
GAN = """
import torch_xla.core.xla_model as xm
from torch.utils.data import DataLoader


def make_train(G, D, opt_g, opt_d, d_steps):
    def train(x, z):
        for _ in range(d_steps):
            opt_d.zero_grad()
            d_loss = D(x).mean() - D(G(z)).mean()
            d_loss.backward()
            xm.optimizer_step(opt_d)
        opt_g.zero_grad()
        g_loss = -D(G(z)).mean()
        g_loss.backward()
        xm.optimizer_step(opt_g)
        return {"G": float(g_loss.item()), "D": float(d_loss.item())}
    return train


def run(G, D, opt_g, opt_d, dataset, z):
    loader = DataLoader(dataset, batch_size=8, drop_last=True)
    train = make_train(G, D, opt_g, opt_d, 2)
    for x in loader:
        metrics = train(x.to(xm.xla_device()), z)
        print(metrics)
"""

# a decoding run called once per batch: its own loop runs the model, and the tokens it returns are
# the run's result (read once per run)
DECODE_RUN = """
import torch
import torch_xla.core.xla_model as xm


def generate(model, ids, n):
    for _ in range(n):
        nxt = model(ids)[:, -1:].argmax(-1)
        ids = torch.cat([ids[:, 1:], nxt], dim=1)
        xm.mark_step()
    return ids.tolist()


def run(model, loader):
    for ids in loader:
        print(generate(model, ids, 8))
"""


def test_a_training_function_whose_loops_only_train_runs_once_a_batch(tmp_path, capsys, monkeypatch):
    got = lint_project(tmp_path, {"gan.py": GAN}, capsys, monkeypatch)
    # (nothing marks a step on this XLA script: the loader loop is reported, not the few
    # discriminator steps inside one pass of it)
    assert got == ["gan.py:17:28:HPU005", "gan.py:17:55:HPU005", "gan.py:24:5:HPU004"]


def test_over_a_marking_loader_too(tmp_path, capsys, monkeypatch):
    marking = GAN.replace("from torch.utils.data import DataLoader\n",
                          "import torch_xla.distributed.parallel_loader as pl\nfrom torch.utils.data import DataLoader\n") \
        .replace("    for x in loader:\n", "    for x in pl.MpDeviceLoader(loader, xm.xla_device()):\n")
    got = lint_project(tmp_path, {"gan.py": marking}, capsys, monkeypatch)
    assert got == ["gan.py:18:28:HPU005", "gan.py:18:55:HPU005"]


# torch_xla's old DataParallel runs `train_loop_fn(model, loader, device, context)` on each replica
# with a per-device ParallelLoader, which marks a step after every batch
LEGACY_DP = """
import torch
import torch_xla.core.xla_model as xm
import torch_xla.distributed.data_parallel as dp


def main(model, train_loader, devices):
    model_parallel = dp.DataParallel(model, device_ids=devices)

    def train_loop_fn(model, loader, device, context):
        opt = context.getattr_or("opt", lambda: torch.optim.SGD(model.parameters(), lr=0.1))
        for x, y in loader:
            opt.zero_grad()
            loss = torch.nn.functional.mse_loss(model(x), y)
            loss.backward()
            xm.optimizer_step(opt)

    CALL
"""


def test_a_loop_function_torch_xla_data_parallel_runs_iterates_a_marking_loader(tmp_path, capsys, monkeypatch):
    src = LEGACY_DP.replace("CALL", "model_parallel(train_loop_fn, train_loader)")
    assert lint_project(tmp_path, {"train_tpu.py": src}, capsys, monkeypatch) == []


def test_the_same_loop_function_called_with_a_plain_loader_marks_nothing(tmp_path, capsys, monkeypatch):
    src = LEGACY_DP.replace("CALL", "train_loop_fn(model, train_loader, xm.xla_device(), None)")
    assert lint_project(tmp_path, {"train_tpu.py": src}, capsys, monkeypatch) == ["train_tpu.py:12:9:HPU004"]


def test_a_decoding_run_per_batch_keeps_its_result_to_the_run(tmp_path, capsys, monkeypatch):
    assert lint_project(tmp_path, {"decode.py": DECODE_RUN}, capsys, monkeypatch) == []


def test_files_in_unrelated_folders_are_linted_without_walking_their_common_folder(tmp_path, capsys, monkeypatch):
    # two loose scripts whose only common folder is far above them (`/` for `/tmp/a.py` and a
    # checkout elsewhere): only their own folders are read, and an unreadable folder is skipped
    from hpulint.cli import main
    from hpulint.index import index_for

    a, b = tmp_path / "one" / "deep" / "a.py", tmp_path / "two" / "b.py"
    for p in (a, b):
        p.parent.mkdir(parents=True)
        p.write_text("import torch\n")
    (tmp_path / "one" / "other.py").write_text("x = 1\n")
    seen = []

    def discover(paths, config):
        seen.extend(paths)
        return [], []

    index_for([a, b], tmp_path, discover, None, project=False)
    assert sorted(seen) == sorted([str(a.parent), str(b.parent)])
    monkeypatch.chdir(tmp_path)
    assert main(["check", "--no-cache", str(a), str(b)]) == 0


# a trainer whose per-batch `train(x)` accumulates gradients over slices (its own loop only trains):
# its body runs every step, and its log helper runs when `self.log_scalars_now` says so
TRAINER = """
import torch
import torch_xla.core.xla_model as xm
import torch_xla.distributed.parallel_loader as pl


class Trainer:
    def __init__(self, model, opt, loader, slices):
        self.model, self.opt, self.loader, self.slices = model, opt, loader, slices
        self.log_scalars_now = False

    def _log(self, loss):
        print(loss.item())

    def train(self, x):
        total = torch.zeros((), device=xm.xla_device())
        for xb in x.chunk(self.slices):
            loss = self.model(xb).mean()
            loss.backward()
            total += loss.detach()
        xm.optimizer_step(self.opt)
        LOG

    def run(self):
        for x in pl.MpDeviceLoader(self.loader, xm.xla_device()):
            self.train(x)
"""


def test_a_log_helper_under_a_log_now_flag_in_a_per_batch_train_function(tmp_path, capsys, monkeypatch):
    src = TRAINER.replace("LOG", "if self.log_scalars_now:\n            self._log(total)")
    assert lint_project(tmp_path, {"trainer.py": src}, capsys, monkeypatch) == []


def test_the_same_log_helper_called_every_batch_reads_every_step(tmp_path, capsys, monkeypatch):
    src = TRAINER.replace("LOG", "self._log(total)")
    assert lint_project(tmp_path, {"trainer.py": src}, capsys, monkeypatch) == ["trainer.py:13:15:HPU005"]
