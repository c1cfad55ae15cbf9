# `if` on a device value every step: the condition is read, the branch taken changes the graph.
import torch
import torch_xla
import torch_xla.core.xla_model as xm

device = torch_xla.device()
torch.manual_seed(0)
x = torch.zeros(4, device=device)
for step in range(8):
    x = x + torch.randn(4).to(device)
    if x.sum() > 0:
        x = x * 0.5
    else:
        x = x - 1
    xm.mark_step()
print(x.sum().item())
