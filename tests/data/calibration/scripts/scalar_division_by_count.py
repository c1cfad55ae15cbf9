# A running mean: divide an accumulated device sum by the Python step count.
import torch
import torch_xla
import torch_xla.core.xla_model as xm

device = torch_xla.device()
total = torch.zeros((), device=device)
for step in range(1, 9):
    total = total + torch.randn(4, device=device).sum()
    mean = total / step
    xm.mark_step()
print(mean.item())
