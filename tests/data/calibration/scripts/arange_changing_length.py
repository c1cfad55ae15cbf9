# torch.arange with a length that changes: every length is another graph.
import torch
import torch_xla
import torch_xla.core.xla_model as xm

device = torch_xla.device()
for n in (4, 5, 4, 6, 5):
    y = torch.arange(n, device=device).float().sum()
    xm.mark_step()
print(y.item())
