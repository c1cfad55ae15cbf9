"""Per-block gradient clipping: the identity autograd Function rescales the incoming gradient
to a norm budget with a clamped factor computed on the device."""
import torch
import torch.nn as nn

torch.manual_seed(0)


class ClipGradNorm(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, max_norm):
        ctx.max_norm = max_norm
        return x.view_as(x)

    @staticmethod
    def backward(ctx, grad):
        norm = grad.norm()
        scale = (ctx.max_norm / (norm + 1e-6)).clamp(max=1.0)
        return grad * scale, None


class ClippedBlock(nn.Module):
    def __init__(self, dim, max_grad_norm=1.0):
        super().__init__()
        self.ff = nn.Sequential(nn.LayerNorm(dim), nn.Linear(dim, 4 * dim), nn.GELU(), nn.Linear(4 * dim, dim))
        self.max_grad_norm = max_grad_norm

    def forward(self, x):
        return ClipGradNorm.apply(x + self.ff(x), self.max_grad_norm)


model = nn.Sequential(*[ClippedBlock(32) for _ in range(3)], nn.Linear(32, 1))
compiled = torch.compile(model)
opt = torch.optim.SGD(model.parameters(), lr=0.01)
for _ in range(3):
    x, y = torch.randn(16, 32), torch.randn(16, 1)
    loss = nn.functional.mse_loss(compiled(x), y)
    loss.backward()
    opt.step()
    opt.zero_grad()
print(f"loss {loss.item():.4f}")
