# The loop counter as an index into a device tensor: steps[i] bakes i into the graph.
import torch
import torch_xla
import torch_xla.core.xla_model as xm

device = torch_xla.device()
steps = torch.linspace(1.0, 0.0, 9).to(device)
x = torch.ones(4, device=device)
for i in range(8):
    x = x * steps[i] + 1
    xm.mark_step()
print(x.sum().item())
