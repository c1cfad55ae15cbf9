"""An evaluation harness that scores one compiled classifier at several precisions (full fp32,
then bf16 and fp16 autocast around the call) to report the accuracy drop of each setting."""
import contextlib

import torch
import torch.nn as nn

torch.manual_seed(0)


class Classifier(nn.Module):
    def __init__(self, dim=32, classes=5):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(dim, 64), nn.GELU(), nn.Linear(64, 64), nn.GELU())
        self.head = nn.Linear(64, classes)

    def forward(self, x):
        return self.head(self.body(x))


def precision_context(name):
    if name == "fp32":
        return contextlib.nullcontext()
    dtype = {"bf16": torch.bfloat16, "fp16": torch.float16}[name]
    return torch.autocast("cpu", dtype=dtype)


def evaluate(model, batches, precision):
    correct = 0
    with torch.no_grad():
        for x, y in batches:
            with precision_context(precision):
                logits = model(x)
            correct += (logits.float().argmax(-1) == y).sum()
    return correct / sum(len(y) for _, y in batches)


model = torch.compile(Classifier().eval())
batches = [(torch.randn(16, 32), torch.randint(0, 5, (16,))) for _ in range(3)]
for precision in ("fp32", "bf16", "fp16"):
    print(precision, float(evaluate(model, batches, precision)))
