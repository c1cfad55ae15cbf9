"""A hand-written AdamW for a research codebase: the compiled `adamw_update` walks the parameters
with their moment buffers and applies the bias corrections `1 - beta1 ** step` and
`math.sqrt(1 - beta2 ** step)` computed from the Python int step the training loop counts."""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(20, 64), nn.ReLU(), nn.Linear(64, 5))
params = [p for p in model.parameters() if p.requires_grad]
exp_avg = [torch.zeros_like(p) for p in params]
exp_avg_sq = [torch.zeros_like(p) for p in params]


@torch.compile
def adamw_update(params, exp_avg, exp_avg_sq, step, lr=1e-3, betas=(0.9, 0.999), eps=1e-8,
                 weight_decay=0.01):
    beta1, beta2 = betas
    bias_correction1 = 1 - beta1 ** step
    bias_correction2 = math.sqrt(1 - beta2 ** step)
    with torch.no_grad():
        for p, m, v in zip(params, exp_avg, exp_avg_sq):
            p.mul_(1 - lr * weight_decay)
            m.lerp_(p.grad, 1 - beta1)
            v.mul_(beta2).addcmul_(p.grad, p.grad, value=1 - beta2)
            denom = (v.sqrt() / bias_correction2).add_(eps)
            p.addcdiv_(m, denom, value=-lr / bias_correction1)


for step in range(1, 9):
    x, y = torch.randn(32, 20), torch.randint(0, 5, (32,))
    loss = F.cross_entropy(model(x), y)
    loss.backward()
    adamw_update(params, exp_avg, exp_avg_sq, step)
    model.zero_grad(set_to_none=False)
print(f"loss {loss.item():.4f}")
