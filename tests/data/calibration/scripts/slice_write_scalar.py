# A slice of a device buffer filled with the loop counter: buf[2:5] = i.
import torch
import torch_xla
import torch_xla.core.xla_model as xm

device = torch_xla.device()
buf = torch.zeros(8, device=device)
for i in range(6):
    buf[2:5] = i
    xm.mark_step()
print(buf.sum().item())
