# .cpu() and .cpu().numpy() of device results each step.
import torch
import torch_xla
import torch_xla.core.xla_model as xm

device = torch_xla.device()
x = torch.randn(4, 4, device=device)
for step in range(5):
    x = torch.tanh(x @ x.T)
    xm.mark_step()
    host = x.cpu()
    arr = x.mean(0).cpu().numpy()
print(host.sum().item(), arr.sum())
