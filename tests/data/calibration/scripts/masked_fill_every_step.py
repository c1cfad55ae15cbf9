# The same update written as masked_fill: one fixed-shape graph for every step.
import torch
import torch_xla
import torch_xla.core.xla_model as xm

device = torch_xla.device()
torch.manual_seed(0)
for step in range(6):
    x = torch.randn(8, 16).to(device)
    m = x > torch.randn(1).to(device)
    x = x.masked_fill(m, -float("inf"))
    out = x.clamp(min=-1).sum()
    xm.mark_step()
print(out.item())
