"""Model selection after training: several checkpoints (the last weights, an EMA copy, the best
validation weights) are restored one after another with load_state_dict into the module that
was compiled once, and each is scored on the same validation batches."""
import copy
import io

import torch
import torch.nn as nn

torch.manual_seed(0)

model = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 3))


def snapshot(state):
    buffer = io.BytesIO()
    torch.save(state, buffer)
    buffer.seek(0)
    return buffer


checkpoints = {}
for name in ("last", "ema", "best"):
    state = copy.deepcopy(model.state_dict())
    for value in state.values():
        value.add_(0.01 * torch.randn_like(value))
    checkpoints[name] = snapshot(state)

compiled = torch.compile(model)
val = [(torch.randn(8, 16), torch.randint(0, 3, (8,))) for _ in range(2)]


def score(batches):
    with torch.no_grad():
        return sum(float((compiled(x).argmax(-1) == y).float().mean()) for x, y in batches)


for name, buffer in checkpoints.items():
    buffer.seek(0)
    model.load_state_dict(torch.load(buffer))
    print(name, score(val) / len(val))
