# A changing exponent: x ** p.
import torch
import torch_xla
import torch_xla.core.xla_model as xm

device = torch_xla.device()
x = torch.rand(8, device=device) + 1
for p in (2.0, 3.0, 4.0, 0.5):
    y = x ** p
    xm.mark_step()
print(y.sum().item())
