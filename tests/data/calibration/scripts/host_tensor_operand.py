# A 0-dim CPU tensor (host data) as an operand of device arithmetic, its value changing.
import torch
import torch_xla
import torch_xla.core.xla_model as xm

device = torch_xla.device()
x = torch.ones(4, 4, device=device)
for i in range(6):
    y = x * torch.tensor(float(i))
    xm.mark_step()
print(y.sum().item())
