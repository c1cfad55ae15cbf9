# A float that changes every step (a decaying learning rate) as a scalar operand.
import torch
import torch_xla
import torch_xla.core.xla_model as xm

device = torch_xla.device()
w = torch.randn(16, 16).to(device)
g = torch.randn(16, 16).to(device)
lr = 0.1
for step in range(8):
    w = w - lr * g
    lr = lr * 0.9
    xm.mark_step()
print(w.sum().item())
