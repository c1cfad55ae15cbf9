"""Dynamo and a loop counter: steps[i] in a compiled sampling step recompiles every iteration
until the recompile limit, then runs eagerly. The loss is read with .item() every step.

Run: TORCH_LOGS=recompiles,graph_breaks python recompile_limit.py 2> recompile_limit.log
"""
import torch

torch._dynamo.config.recompile_limit = 4  # the default is 8: a shorter log, the same story
steps = torch.linspace(1.0, 0.0, 13)
model = torch.nn.Linear(8, 8)


@torch.compile(backend="eager", dynamic=False)
def sample_step(x, i):
    t = steps[i]
    v = model(x)
    return x * t - v * (1 - t)


@torch.compile(backend="eager")
def train_step(x):
    loss = model(x).pow(2).mean()
    loss.backward()
    print("loss", loss.item())
    return loss


x = torch.randn(2, 8)
with torch.no_grad():
    for i in range(6):
        x = sample_step(x, i)
for _ in range(2):
    train_step(torch.randn(2, 8))
