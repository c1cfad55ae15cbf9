# Host tensors only inside the loop: nothing runs on the device after the setup.
import torch
import torch_xla
import torch_xla.core.xla_model as xm

device = torch_xla.device()
w = torch.ones(4, device=device)
acc = torch.zeros(4)
for step in range(10):
    acc += torch.randn(4)
    if acc.sum() > 100:
        break
    xm.mark_step()
print(float(acc.sum()))
