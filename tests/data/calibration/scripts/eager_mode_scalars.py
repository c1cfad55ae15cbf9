# Eager mode with scalar operands that change: x * s for several s.
import torch
import torch_xla

torch_xla.experimental.eager_mode(True)
device = torch_xla.device()
x = torch.ones(4, device=device)
for s in (0, 1, 2, 3, 2.5):
    y = x * s
print(y.sum().item())
