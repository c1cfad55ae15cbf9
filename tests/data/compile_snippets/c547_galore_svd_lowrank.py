"""GaLore-style memory-efficient training of a linear layer's weight: every `UPDATE_GAP` steps a
compiled helper refreshes the gradient's low-rank projector with `torch.svd_lowrank(grad, q=RANK)`,
and a compiled Adam update keeps its moments in the projected space and projects the update back
(`proj @ (m / (sqrt(v) + eps))`)."""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
RANK, UPDATE_GAP, LR = 8, 3, 1e-2
layer = nn.Linear(64, 96, bias=False)


@torch.compile
def refresh_projector(grad):
    u, _, _ = torch.svd_lowrank(grad, q=RANK)
    return u


@torch.compile
def galore_adam(weight, grad, proj, exp_avg, exp_avg_sq, beta1=0.9, beta2=0.999, eps=1e-8):
    low = proj.T @ grad
    exp_avg.mul_(beta1).add_(low, alpha=1 - beta1)
    exp_avg_sq.mul_(beta2).addcmul_(low, low, value=1 - beta2)
    weight.sub_(LR * (proj @ (exp_avg / (exp_avg_sq.sqrt() + eps))))


exp_avg = torch.zeros(RANK, 64)
exp_avg_sq = torch.zeros(RANK, 64)
for step in range(7):
    x, y = torch.randn(32, 64), torch.randn(32, 96)
    loss = F.mse_loss(layer(x), y)
    loss.backward()
    with torch.no_grad():
        if step % UPDATE_GAP == 0:
            proj = refresh_projector(layer.weight.grad)
        galore_adam(layer.weight, layer.weight.grad, proj, exp_avg, exp_avg_sq)
    layer.weight.grad = None
print(f"loss {loss.item():.4f}")
