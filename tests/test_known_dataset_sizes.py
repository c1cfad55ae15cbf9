"""HPU007 knows the sizes of the torchvision datasets whose sizes are fixed: a batch size that
divides them leaves no short last batch. Written for these tests; nothing is copied."""
from __future__ import annotations

import textwrap

from hpulint.engine import lint_source

SCRIPT = """
import torch
import torch_xla.core.xla_model as xm
from torch.utils.data import DataLoader
from torchvision.datasets import mnist, CIFAR10

BATCH = {BATCH}
data = {DATA}


def train(model, optimizer):
    loader = DataLoader(data, batch_size=BATCH, shuffle=True)
    for x, y in loader:
        optimizer.zero_grad()
        loss = torch.nn.functional.cross_entropy(model(x.to("xla")), y.to("xla"))
        loss.backward()
        optimizer.step()
        xm.mark_step()
"""


def found(batch: str, data: str) -> list:
    src = textwrap.dedent(SCRIPT).replace("{BATCH}", batch).replace("{DATA}", data)
    return [(f.code, f.line) for f in lint_source(src, "train.py") if f.code == "HPU007"]


def test_mnist_training_images_in_batches_of_32_leave_no_short_batch():
    assert found("32", 'mnist.MNIST("data", train=True, download=True)') == []


def test_mnist_in_batches_of_48_does():
    # 60,000 = 1,250 x 48: still even; 64 is not (60,000 / 64 = 937.5)
    assert found("48", 'mnist.MNIST("data")') == []
    assert found("64", 'mnist.MNIST("data")') == [("HPU007", 12)]


def test_the_test_split_has_its_own_size():
    # CIFAR-10's 10,000 test images in batches of 16: even; its 50,000 training images in 30: not
    assert found("16", 'CIFAR10("data", train=False)') == []
    assert found("30", 'CIFAR10("data", train=True)') == [("HPU007", 12)]


def test_a_dataset_of_unknown_size_still_needs_drop_last():
    assert found("32", 'torch.utils.data.TensorDataset(torch.randn(1000, 4))') == [("HPU007", 12)]
