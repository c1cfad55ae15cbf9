# A training loop on PyTorch/XLA with a compiled "clip, check and apply" update helper in the
# style of Trainer-based loops: it computes the global gradient norm, skips the update when
# the norm is not finite (as after a loss spike) and otherwise clips and applies SGD.
import math

import torch
import torch.nn as nn
import torch_xla.core.xla_model as xm

torch.manual_seed(0)


def global_grad_norm(grads):
    return torch.linalg.vector_norm(torch.stack([torch.linalg.vector_norm(g) for g in grads]))


@torch.compile(backend="openxla")
def clipped_sgd_update(params, grads, lr, max_norm):
    total_norm = global_grad_norm(grads)
    if not math.isfinite(total_norm):
        return total_norm
    scale = torch.clamp(max_norm / (total_norm + 1e-6), max=1.0)
    for p, g in zip(params, grads):
        p.sub_(lr * scale * g)
    return total_norm


device = xm.xla_device()
model = nn.Sequential(nn.Linear(16, 32), nn.GELU(), nn.Linear(32, 4)).to(device)
params = list(model.parameters())
for step in range(5):
    x = torch.randn(8, 16, device=device)
    y = torch.randn(8, 4, device=device)
    loss = nn.functional.mse_loss(model(x), y)
    loss.backward()
    with torch.no_grad():
        grad_norm = clipped_sgd_update(params, [p.grad for p in params], 0.05, 1.0)
    model.zero_grad()
    xm.mark_step()
print(loss.item(), grad_norm.item())
