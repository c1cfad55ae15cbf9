# torch.where in place of the `if`: no read, one graph.
import torch
import torch_xla
import torch_xla.core.xla_model as xm

device = torch_xla.device()
torch.manual_seed(0)
x = torch.zeros(4, device=device)
for step in range(8):
    x = x + torch.randn(4).to(device)
    x = torch.where(x.sum() > 0, x * 0.5, x - 1)
    xm.mark_step()
print(x.sum().item())
