"""Validation loop with torchmetrics-style running metrics updated inside the compiled
evaluation step: mean loss and top-1 accuracy, kept as tensors on small metric objects and read
once at the end of the epoch.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class RunningMean:
    def __init__(self):
        self.total = torch.zeros(())
        self.count = torch.zeros(())

    def update(self, values):
        self.total = self.total + values.sum()
        self.count = self.count + values.numel()

    def compute(self):
        return self.total / self.count


class Accuracy(RunningMean):
    def update(self, logits, target):
        super().update((logits.argmax(-1) == target).float())


model = nn.Sequential(nn.Linear(12, 32), nn.ReLU(), nn.Linear(32, 5)).eval()
val_loss, val_acc = RunningMean(), Accuracy()


@torch.compile
def eval_step(x, y):
    logits = model(x)
    val_loss.update(F.cross_entropy(logits, y, reduction="none"))
    val_acc.update(logits, y)
    return logits


with torch.no_grad():
    for _ in range(6):
        eval_step(torch.randn(16, 12), torch.randint(0, 5, (16,)))
print(float(val_loss.compute()), float(val_acc.compute()))
