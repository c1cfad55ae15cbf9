# print(tensor), an f-string of a tensor and .tolist() each step.
import torch
import torch_xla
import torch_xla.core.xla_model as xm

device = torch_xla.device()
x = torch.randn(3, device=device)
for step in range(4):
    x = x * 0.5 + 1
    print(x)
    print(f"{x.sum():.3f}")
    print(x.tolist())
    xm.mark_step()
