# clamp with bounds that change every step (Scalar arguments).
import torch
import torch_xla
import torch_xla.core.xla_model as xm

device = torch_xla.device()
x = torch.randn(16, device=device)
for i in range(6):
    y = x.clamp(min=-0.5 * (i + 2), max=0.5 * (i + 2))
    xm.mark_step()
print(y.sum().item())
