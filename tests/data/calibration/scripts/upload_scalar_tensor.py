# A 0-dim host tensor uploaded with .to(device) every step; its value goes 0, 1, 2, ...
import torch
import torch_xla
import torch_xla.core.xla_model as xm

device = torch_xla.device()
x = torch.ones(4, 4, device=device)
for i in range(6):
    t = torch.tensor(float(i)).to(device)
    y = x * t
    xm.mark_step()
print(y.sum().item())
