"""An MNIST-style convolutional classifier trained on PyTorch/XLA (test_train_mp_mnist style).

Fake 28x28 images from a ``SampleGenerator``, ``MpDeviceLoader``, SGD with momentum,
``xm.optimizer_step``, a test loop that counts correct predictions on the device and reads the
accuracy once per epoch, and ``metrics_report()`` at the end.

    python xla_mnist.py --epochs 2 --train-batches 4
"""
import argparse

import torch
import torch.nn as nn
import torch.nn.functional as F
import torch_xla
import torch_xla.core.xla_model as xm
import torch_xla.debug.metrics as met
import torch_xla.distributed.parallel_loader as pl
import torch_xla.utils.utils as xu


class MNIST(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 4, kernel_size=5)
        self.bn1 = nn.BatchNorm2d(4)
        self.conv2 = nn.Conv2d(4, 8, kernel_size=5)
        self.bn2 = nn.BatchNorm2d(8)
        self.fc1 = nn.Linear(128, 16)
        self.fc2 = nn.Linear(16, 10)

    def forward(self, x):
        x = F.relu(F.max_pool2d(self.conv1(x), 2))
        x = self.bn1(x)
        x = F.relu(F.max_pool2d(self.conv2(x), 2))
        x = self.bn2(x)
        x = torch.flatten(x, 1)
        x = F.relu(self.fc1(x))
        return F.log_softmax(self.fc2(x), dim=1)


def main(args):
    torch.manual_seed(1)
    device = torch_xla.device()
    train = xu.SampleGenerator(
        data=(torch.zeros(args.batch_size, 1, 28, 28),
              torch.zeros(args.batch_size, dtype=torch.int64)),
        sample_count=args.train_batches)
    test = xu.SampleGenerator(
        data=(torch.zeros(args.batch_size, 1, 28, 28),
              torch.zeros(args.batch_size, dtype=torch.int64)),
        sample_count=2)
    model = MNIST().to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.5)
    loss_fn = nn.NLLLoss()

    def train_loop(loader):
        model.train()
        for step, (data, target) in enumerate(loader):
            optimizer.zero_grad()
            loss = loss_fn(model(data), target)
            loss.backward()
            xm.optimizer_step(optimizer)

    def test_loop(loader):
        model.eval()
        correct, total = torch.zeros((), dtype=torch.int64, device=device), 0
        with torch.no_grad():
            for data, target in loader:
                pred = model(data).argmax(dim=1, keepdim=True)
                correct += pred.eq(target.view_as(pred)).sum()
                total += data.size(0)
        return 100.0 * correct.item() / total

    for epoch in range(1, args.epochs + 1):
        train_loop(pl.MpDeviceLoader(train, device))
        accuracy = test_loop(pl.MpDeviceLoader(test, device))
        xm.master_print(f"epoch {epoch} accuracy {accuracy:.2f}")
    if args.metrics:
        xm.master_print(met.short_metrics_report())


if __name__ == "__main__":
    p = argparse.ArgumentParser()
    p.add_argument("--epochs", type=int, default=2)
    p.add_argument("--train-batches", type=int, default=4)
    p.add_argument("--batch-size", type=int, default=4)
    p.add_argument("--metrics", action="store_true")
    main(p.parse_args())
