"""Class-incremental learning on XLA: each new task brings two classes, and the classifier
widens its head, copying the rows of the classes it already knows, before training on the task."""
import torch
import torch.nn as nn
import torch.nn.functional as F
import torch_xla.core.xla_model as xm

torch.manual_seed(0)
device = xm.xla_device()
TASKS = [(0, 1), (2, 3), (4, 5), (6, 7), (8, 9)]


class IncrementalClassifier(nn.Module):
    def __init__(self, n_classes, dim=64):
        super().__init__()
        self.backbone = nn.Sequential(nn.Linear(32, dim), nn.ReLU(), nn.Linear(dim, dim), nn.ReLU())
        self.head = nn.Linear(dim, n_classes)

    def add_classes(self, n_new):
        old = self.head
        new = nn.Linear(old.in_features, old.out_features + n_new).to(old.weight.device)
        with torch.no_grad():
            new.weight[: old.out_features] = old.weight
            new.bias[: old.out_features] = old.bias
        self.head = new

    def forward(self, x):
        return self.head(self.backbone(x))


def task_batches(classes, steps=3, batch=16):
    for _ in range(steps):
        y = torch.tensor(classes)[torch.randint(0, len(classes), (batch,))]
        yield torch.randn(batch, 32) + y[:, None].float(), y


model = IncrementalClassifier(len(TASKS[0])).to(device)
compiled = torch.compile(model, backend="openxla")
for task, classes in enumerate(TASKS):
    if task:
        model.add_classes(len(classes))
    opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    for x, y in task_batches(classes):
        loss = F.cross_entropy(compiled(x.to(device)), y.to(device))
        loss.backward()
        opt.step()
        opt.zero_grad()
        xm.mark_step()
    print(f"task {task}: {model.head.out_features} classes, loss {loss.item():.3f}")
