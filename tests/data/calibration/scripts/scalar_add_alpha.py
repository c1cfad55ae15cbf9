# The alpha of add (a Scalar argument) from the loop counter: 0 and 1 are special.
import torch
import torch_xla
import torch_xla.core.xla_model as xm

device = torch_xla.device()
x = torch.ones(8, device=device)
y = torch.ones(8, device=device)
for i in range(6):
    z = x.add(y, alpha=i)
    xm.mark_step()
print(z.sum().item())
