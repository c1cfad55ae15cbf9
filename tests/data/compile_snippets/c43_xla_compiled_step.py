import torch
import torch_xla
import torch_xla.core.xla_model as xm

torch.manual_seed(0)

device = xm.xla_device()
w = torch.randn(6, 6, device=device, requires_grad=True)


def step(x):
    y = torch.tanh(x @ w)
    if y.mean() > 0:
        y = y * 2
    return y.sum()


compiled = torch_xla.compile(step)
for _ in range(4):
    compiled(torch.randn(3, 6, device=device))
