"""Knowledge distillation through the `openxla` backend with a cosine-decayed mixing weight.

The training script computes its schedules with NumPy: the weight of the distillation term
starts at 0.9 and follows a cosine down to 0.1 over the run, clipped with `np.clip`. The value,
a NumPy float, is passed to the compiled loss every step.
"""
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

try:
    import torch_xla
except ImportError:  # no PyTorch/XLA here: run on the CPU with the default backend
    torch_xla = None

torch.manual_seed(0)
TOTAL_STEPS, T = 8, 2.0

teacher = nn.Sequential(nn.Linear(20, 64), nn.ReLU(), nn.Linear(64, 10)).eval()
student = nn.Sequential(nn.Linear(20, 16), nn.ReLU(), nn.Linear(16, 10))


def distill_loss(x, labels, alpha):
    with torch.no_grad():
        soft_targets = F.softmax(teacher(x) / T, dim=-1)
    logits = student(x)
    kd = F.kl_div(F.log_softmax(logits / T, dim=-1), soft_targets, reduction="batchmean") * T * T
    return alpha * kd + (1 - alpha) * F.cross_entropy(logits, labels)


loss_fn = torch.compile(distill_loss, backend="openxla" if torch_xla else "eager")
opt = torch.optim.SGD(student.parameters(), lr=0.05)
for step in range(TOTAL_STEPS):
    progress = step / (TOTAL_STEPS - 1)
    alpha = np.clip(0.1 + 0.4 * (1 + np.cos(np.pi * progress)), 0.1, 0.9)
    loss = loss_fn(torch.randn(32, 20), torch.randint(0, 10, (32,)), alpha)
    loss.backward()
    opt.step()
    opt.zero_grad()
print(round(float(alpha), 3), round(loss.item(), 3))
