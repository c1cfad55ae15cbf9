# Self-distillation (BYOL/DINO style): the student trains every step, and the teacher is an
# exponential moving average of the student updated every EMA_EVERY steps. The EMA update is
# a compiled function given the global step; it returns early on the steps it skips.
import copy

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)

EMA_EVERY = 4
EMA_DECAY = 0.99

student = nn.Sequential(nn.Linear(32, 64), nn.ReLU(), nn.Linear(64, 16))
teacher = copy.deepcopy(student).requires_grad_(False)
opt = torch.optim.AdamW(student.parameters(), lr=1e-3)


@torch.compile
def update_teacher(step):
    if step % EMA_EVERY != 0:
        return
    with torch.no_grad():
        for pt, ps in zip(teacher.parameters(), student.parameters()):
            pt.lerp_(ps, 1 - EMA_DECAY)


for step in range(12):
    x = torch.randn(8, 32)
    view1, view2 = x + 0.1 * torch.randn_like(x), x + 0.1 * torch.randn_like(x)
    with torch.no_grad():
        target = F.softmax(teacher(view2) / 0.04, dim=-1)
    loss = -(target * F.log_softmax(student(view1) / 0.1, dim=-1)).sum(-1).mean()
    loss.backward()
    opt.step()
    opt.zero_grad()
    update_teacher(step)
print(loss.item())
