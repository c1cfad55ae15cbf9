# Random tensors made on the device every step.
import torch
import torch_xla
import torch_xla.core.xla_model as xm

device = torch_xla.device()
acc = torch.zeros(8, device=device)
for step in range(6):
    acc = acc + torch.randn(8, device=device) * 0.1
    xm.mark_step()
print(acc.sum().item())
