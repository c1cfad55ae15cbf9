# nanoGPT's schedule: the learning rate computed in Python and written into param_groups.
import math

import torch
import torch_xla
import torch_xla.core.xla_model as xm

device = torch_xla.device()
torch.manual_seed(0)
model = torch.nn.Linear(8, 1).to(device)
opt = torch.optim.AdamW(model.parameters(), lr=6e-4, betas=(0.9, 0.95))


def get_lr(it, warmup=3, total=10, max_lr=6e-4, min_lr=6e-5):
    if it < warmup:
        return max_lr * (it + 1) / (warmup + 1)
    ratio = (it - warmup) / (total - warmup)
    return min_lr + 0.5 * (1.0 + math.cos(math.pi * ratio)) * (max_lr - min_lr)


for it in range(8):
    for group in opt.param_groups:
        group["lr"] = get_lr(it)
    x = torch.randn(4, 8).to(device)
    loss = model(x).pow(2).mean()
    loss.backward()
    opt.step()
    opt.zero_grad(set_to_none=True)
    xm.mark_step()
print(loss.item())
