"""Dynamo graph breaks in a compiled module: a host read, a branch on a tensor, a dynamic op.

Run: TORCH_LOGS=graph_breaks python graph_breaks.py 2> graph_breaks.log
"""
import torch


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = torch.nn.Linear(8, 4)

    def forward(self, x):
        h = self.fc(x)
        scale = h.abs().max().item()
        if h.mean() > 0:
            h = h * 2
        kept = h[h > 0]
        return kept.sum() / scale


model = torch.compile(Net(), backend="eager")
for _ in range(2):
    model(torch.randn(4, 8))
