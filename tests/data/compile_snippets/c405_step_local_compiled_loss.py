"""Training loop whose step function compiles its loss closure afresh on every call.

The code was refactored so that `train_step` defines its loss as a nested function decorated
with `@torch.compile`, closing over the current consistency weight from the ramp-up schedule.
A new function object is therefore created and wrapped at every step.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
RAMP_STEPS = 6

model = nn.Sequential(nn.Linear(12, 32), nn.ReLU(), nn.Dropout(0.1), nn.Linear(32, 3))
opt = torch.optim.SGD(model.parameters(), lr=0.1)


def train_step(x, labels, consistency_weight):
    @torch.compile
    def loss_fn(x, labels):
        logits_a, logits_b = model(x), model(x)
        supervised = F.cross_entropy(logits_a, labels)
        consistency = F.mse_loss(logits_a.softmax(-1), logits_b.softmax(-1))
        return supervised + consistency_weight * consistency

    loss = loss_fn(x, labels)
    loss.backward()
    opt.step()
    opt.zero_grad()
    return loss


for step in range(RAMP_STEPS):
    weight = 10.0 * min(1.0, step / RAMP_STEPS) ** 2
    loss = train_step(torch.randn(16, 12), torch.randint(0, 3, (16,)), weight)
print(round(loss.item(), 3))
