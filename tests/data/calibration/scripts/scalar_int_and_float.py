# The same scalar value as an int and as a float: 2, then 2.0, then 3, then 3.0.
import torch
import torch_xla
import torch_xla.core.xla_model as xm

device = torch_xla.device()
x = torch.ones(4, device=device)
for s in (2, 2.0, 3, 3.0, 5):
    y = x * s
    xm.mark_step()
print(y.sum().item())
