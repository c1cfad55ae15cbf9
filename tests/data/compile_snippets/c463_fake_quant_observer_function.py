"""Quantization-aware training of a small MLP with a hand-written straight-through fake-quantizer:
the `autograd.Function` tracks the activations' running abs-max in the observer's buffer (an
in-place exponential moving average), rounds to the int8 grid it implies and passes the gradient
straight through in `backward`."""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class FakeQuantSTE(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, running_absmax, momentum):
        running_absmax.mul_(1 - momentum).add_(momentum * x.detach().abs().max())
        scale = running_absmax.clamp(min=1e-8) / 127
        return torch.clamp(torch.round(x / scale), -127, 127) * scale

    @staticmethod
    def backward(ctx, grad):
        return grad, None, None


class ActQuant(nn.Module):
    def __init__(self, momentum=0.1):
        super().__init__()
        self.momentum = momentum
        self.register_buffer("running_absmax", torch.ones(()))

    def forward(self, x):
        return FakeQuantSTE.apply(x, self.running_absmax, self.momentum)


model = nn.Sequential(nn.Linear(20, 64), nn.ReLU(), ActQuant(), nn.Linear(64, 64), nn.ReLU(),
                      ActQuant(), nn.Linear(64, 5))
step_model = torch.compile(model)
opt = torch.optim.SGD(model.parameters(), lr=0.05)
for step in range(6):
    x, y = torch.randn(32, 20), torch.randint(0, 5, (32,))
    loss = F.cross_entropy(step_model(x), y)
    loss.backward()
    opt.step()
    opt.zero_grad()
print(f"loss {loss.item():.4f}", [round(m.running_absmax.item(), 3) for m in model if isinstance(m, ActQuant)])
