# Scalar operands 0, 1 and -1 against other values: x * s for s in 0, 1, -1, 2, 3, -2, 0.5, 1.0.
import torch
import torch_xla
import torch_xla.core.xla_model as xm

device = torch_xla.device()
x = torch.ones(4, 4, device=device)
for s in (0, 1, -1, 2, 3, -2, 0.5, 1.0, 2.0):
    y = x * s
    xm.mark_step()
print(y.sum().item())
