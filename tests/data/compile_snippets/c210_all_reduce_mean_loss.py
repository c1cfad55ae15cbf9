"""Data-parallel training helper (run here as a one-process gloo group): the compiled train step
averages the loss over ranks with all_reduce so every rank logs the same value."""
import tempfile

import torch
import torch.distributed as dist
import torch.nn as nn

torch.manual_seed(0)
store = tempfile.NamedTemporaryFile(delete=False).name
dist.init_process_group("gloo", init_method=f"file://{store}", rank=0, world_size=1)

model = nn.Sequential(nn.Linear(24, 48), nn.ReLU(), nn.Linear(48, 5))
opt = torch.optim.SGD(model.parameters(), lr=0.05)


def reduce_mean(t):
    t = t.detach().clone()
    dist.all_reduce(t, op=dist.ReduceOp.SUM)
    return t / dist.get_world_size()


def train_loss(x, y):
    loss = nn.functional.cross_entropy(model(x), y)
    return loss, reduce_mean(loss)


ctrain = torch.compile(train_loss)
for _ in range(4):
    loss, logged = ctrain(torch.randn(16, 24), torch.randint(0, 5, (16,)))
    loss.backward()
    opt.step()
    opt.zero_grad()
print(f"mean loss {logged.item():.4f}")
dist.destroy_process_group()
