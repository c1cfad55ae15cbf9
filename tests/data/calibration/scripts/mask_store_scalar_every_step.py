# A boolean-mask store of a Python scalar every step, x[mask] = -inf: PyTorch lowers it to an
# index_put at the mask's nonzero positions, whose count the data decides.
import torch
import torch_xla
import torch_xla.core.xla_model as xm

device = torch_xla.device()
torch.manual_seed(0)
for step in range(6):
    x = torch.randn(8, 16).to(device)
    m = x > torch.randn(1).to(device)
    x[m] = -float("inf")
    out = x.clamp(min=-1).sum()
    xm.mark_step()
print(out.item())
