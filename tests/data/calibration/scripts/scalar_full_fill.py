# A factory's fill value from the loop counter: torch.full((8,), i, device=...).
import torch
import torch_xla
import torch_xla.core.xla_model as xm

device = torch_xla.device()
x = torch.ones(8, device=device)
for i in range(6):
    y = x + torch.full((8,), float(i), device=device)
    xm.mark_step()
print(y.sum().item())
