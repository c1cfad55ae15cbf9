# Gradient clipping whose returned norm is read with .item() each step to skip bad steps.
import math

import torch
import torch_xla
import torch_xla.core.xla_model as xm

device = torch_xla.device()
torch.manual_seed(15)
model = torch.nn.Sequential(torch.nn.Linear(6, 6), torch.nn.ReLU(), torch.nn.Linear(6, 1)).to(device)
opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
skipped = 0
for step in range(5):
    x = torch.randn(4, 6).to(device)
    loss = model(x).pow(2).mean()
    opt.zero_grad()
    loss.backward()
    norm = torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    if not math.isfinite(norm.item()):
        skipped += 1
        continue
    opt.step()
    xm.mark_step()
print(skipped)
