"""Binary-weight layer for a quantised network: weights are binarised with a sign
function whose backward is a clipped straight-through estimator, written as a custom
autograd Function whose backward is marked once-differentiable."""
import torch
import torch.nn as nn
from torch.autograd.function import once_differentiable

torch.manual_seed(0)


class BinarizeSTE(torch.autograd.Function):
    @staticmethod
    def forward(ctx, w):
        ctx.save_for_backward(w)
        return torch.where(w >= 0, torch.ones_like(w), -torch.ones_like(w))

    @staticmethod
    @once_differentiable
    def backward(ctx, grad_out):
        (w,) = ctx.saved_tensors
        return grad_out * (w.abs() <= 1).to(grad_out.dtype)


class BinaryLinear(nn.Linear):
    def forward(self, x):
        scale = self.weight.abs().mean()
        return nn.functional.linear(x, BinarizeSTE.apply(self.weight) * scale, self.bias)


net = nn.Sequential(BinaryLinear(20, 32), nn.BatchNorm1d(32), nn.ReLU(), BinaryLinear(32, 4))
cnet = torch.compile(net)
opt = torch.optim.Adam(net.parameters(), lr=1e-3)
for _ in range(4):
    loss = nn.functional.cross_entropy(cnet(torch.randn(16, 20)), torch.randint(0, 4, (16,)))
    opt.zero_grad()
    loss.backward()
    opt.step()
print(loss.item())
