# torch.masked_select of a device tensor every step.
import torch
import torch_xla
import torch_xla.core.xla_model as xm

device = torch_xla.device()
torch.manual_seed(0)
for step in range(5):
    x = torch.randn(12).to(device)
    sel = torch.masked_select(x, x > 0)
    out = sel.mean()
    xm.mark_step()
print(out.item())
