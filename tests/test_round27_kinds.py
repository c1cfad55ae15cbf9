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
