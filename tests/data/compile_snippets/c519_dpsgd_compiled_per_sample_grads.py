"""DP-SGD with functorch: the per-sample gradient function `vmap(grad(loss_fn))` is built once
and compiled as a whole; each step clips the per-sample gradient norms, adds Gaussian noise and
applies the update, and the batch loss for the log is computed by the plain, uncompiled loss."""
import torch
import torch.nn as nn
from torch.func import functional_call, grad, vmap

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(20, 32), nn.Tanh(), nn.Linear(32, 1))
params = {k: v.detach() for k, v in model.named_parameters()}


def loss_fn(p, x, y):
    pred = functional_call(model, p, (x,))
    return nn.functional.binary_cross_entropy_with_logits(pred, y)


per_sample_grads = torch.compile(vmap(grad(loss_fn), in_dims=(None, 0, 0)))
clip, sigma, lr = 1.0, 0.8, 0.1
for step in range(4):
    x = torch.randn(16, 20)
    y = (x[:, :1] > 0).float()
    grads = per_sample_grads(params, x.unsqueeze(1), y.unsqueeze(1))
    norms = torch.sqrt(sum(g.flatten(1).pow(2).sum(1) for g in grads.values()))
    factor = (clip / (norms + 1e-6)).clamp(max=1.0)
    for k in params:
        g = (grads[k] * factor.view(-1, *[1] * (grads[k].dim() - 1))).sum(0)
        g = (g + sigma * clip * torch.randn_like(g)) / x.shape[0]
        params[k] = params[k] - lr * g
    with torch.no_grad():
        batch_loss = loss_fn(params, x, y)
print(f"loss {batch_loss.item():.4f}")
