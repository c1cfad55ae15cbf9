"""Dynamo recompiles: a compiled step called with the loop counter and with a short last batch.

Run: TORCH_LOGS=recompiles python recompiles.py 2> recompiles.log
"""
import torch


@torch.compile(backend="eager")
def scaled_step(x, step):
    return x * step + 1


@torch.compile(backend="eager", dynamic=False)
def forward(batch, weight):
    return torch.relu(batch @ weight).sum()


x = torch.randn(4, 8)
for step in range(3):
    scaled_step(x, step)

weight = torch.randn(8, 2)
data = torch.randn(10, 8)
for start in range(0, 10, 4):
    forward(data[start:start + 4], weight)
