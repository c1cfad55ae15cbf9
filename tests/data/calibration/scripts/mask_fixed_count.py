# Boolean-mask indexing where the mask always has the same number of True values.
import torch
import torch_xla
import torch_xla.core.xla_model as xm

device = torch_xla.device()
mask = torch.tensor([True, False] * 8).to(device)
for step in range(6):
    x = torch.randn(16).to(device)
    out = x[mask].sum()
    xm.mark_step()
print(out.item())
