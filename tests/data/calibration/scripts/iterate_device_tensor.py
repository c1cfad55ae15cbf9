# A sampler that walks a device time grid by iterating it (`for t in ts`, `zip(ts[:-1], ts[1:])`):
# Tensor.__iter__ is one unbind, so every step reads its time as device data, not as a constant
# index; the step graph is the same each pass (compare index_loop_counter.py).
import torch
import torch_xla
import torch_xla.core.xla_model as xm

device = torch_xla.device()
torch.manual_seed(0)
ts = torch.linspace(0, 1, 7).to(device)
x = torch.randn(8, 16).to(device)
xm.mark_step()
for t0, t1 in zip(ts[:-1], ts[1:]):
    x = x + (t1 - t0) * torch.tanh(x * t0)
    xm.mark_step()
print(x.sum().item())
