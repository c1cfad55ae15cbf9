"""Gaudi CNN training with a BatchNorm momentum schedule.

Some recipes anneal the BatchNorm running-statistics momentum over training (large early, small
late, so the statistics settle as the weights do). A schedule helper walks the model's BatchNorm
layers at the start of every epoch and sets their `momentum`; the model is compiled once.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

try:
    import habana_frameworks.torch.core as htcore  # Gaudi software stack: registers "hpu_backend"
except ImportError:  # CPU-only machine: same code, no step markers
    htcore = None

torch.manual_seed(0)


def conv_bn(cin, cout):
    return nn.Sequential(nn.Conv2d(cin, cout, 3, padding=1, bias=False), nn.BatchNorm2d(cout), nn.ReLU())


class SmallCNN(nn.Module):
    def __init__(self, classes=10):
        super().__init__()
        self.features = nn.Sequential(conv_bn(3, 16), nn.MaxPool2d(2), conv_bn(16, 32))
        self.head = nn.Linear(32, classes)

    def forward(self, x):
        return self.head(self.features(x).mean((2, 3)))


def set_bn_momentum(model, epoch, start=0.1, decay=0.7):
    for m in model.modules():
        if isinstance(m, nn.BatchNorm2d):
            m.momentum = start * decay ** epoch


model = SmallCNN()
compiled = torch.compile(model, backend="hpu_backend" if htcore else "eager")
opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)

for epoch in range(5):
    set_bn_momentum(model, epoch)
    for _ in range(2):
        x, y = torch.randn(8, 3, 16, 16), torch.randint(0, 10, (8,))
        F.cross_entropy(compiled(x), y).backward()
        opt.step()
        opt.zero_grad()
        if htcore:
            htcore.mark_step()
print(model.features[0][1].momentum)
