# torch.nonzero of a device tensor every step.
import torch
import torch_xla
import torch_xla.core.xla_model as xm

device = torch_xla.device()
torch.manual_seed(0)
for step in range(5):
    x = torch.randn(12).to(device)
    idx = torch.nonzero(x > 0.5)
    out = idx.sum()
    xm.mark_step()
print(out.item())
