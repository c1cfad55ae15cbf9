# Boolean-mask indexing x[x > 0] every step: the count of True values decides the shape.
import torch
import torch_xla
import torch_xla.core.xla_model as xm

device = torch_xla.device()
torch.manual_seed(0)
for step in range(6):
    x = torch.randn(16).to(device)
    pos = x[x > 0]
    out = pos.sum()
    xm.mark_step()
print(out.item())
