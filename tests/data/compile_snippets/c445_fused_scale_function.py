"""A fused scale-and-shift op written as a custom `autograd.Function` (a stand-in for a hand
kernel): it does not materialize missing output gradients and computes in `backward` only the
gradients `ctx.needs_input_grad` asks for, so frozen scales cost nothing."""
import torch
import torch.nn as nn

torch.manual_seed(0)


class ScaleShift(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, scale, shift):
        ctx.set_materialize_grads(False)
        ctx.save_for_backward(x, scale)
        return x * scale + shift

    @staticmethod
    def backward(ctx, grad_out):
        if grad_out is None:
            return None, None, None
        x, scale = ctx.saved_tensors
        grad_x = grad_out * scale if ctx.needs_input_grad[0] else None
        grad_scale = (grad_out * x).sum(0) if ctx.needs_input_grad[1] else None
        grad_shift = grad_out.sum(0) if ctx.needs_input_grad[2] else None
        return grad_x, grad_scale, grad_shift


class AdaptedMLP(nn.Module):
    def __init__(self, dim=32):
        super().__init__()
        self.fc1, self.fc2 = nn.Linear(dim, dim), nn.Linear(dim, 1)
        self.scale = nn.Parameter(torch.ones(dim), requires_grad=False)
        self.shift = nn.Parameter(torch.zeros(dim))

    def forward(self, x):
        return self.fc2(ScaleShift.apply(torch.relu(self.fc1(x)), self.scale, self.shift))


model = AdaptedMLP()
cmodel = torch.compile(model)
opt = torch.optim.SGD([p for p in model.parameters() if p.requires_grad], lr=0.01)
for _ in range(4):
    loss = cmodel(torch.randn(16, 32)).pow(2).mean()
    loss.backward()
    opt.step()
    opt.zero_grad()
print(f"loss {loss.item():.4f}")
