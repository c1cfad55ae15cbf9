# A loop counter as a Python scalar operand: x * i. On PyTorch/XLA 0 and 1 are constants of the
# graph, every other value is graph data.
import torch
import torch_xla
import torch_xla.core.xla_model as xm

device = torch_xla.device()
x = torch.ones(4, 4, device=device)
for i in range(8):
    y = x * i
    xm.mark_step()
print(y.sum().item())
