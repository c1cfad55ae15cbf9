"""Memory-saving training with an in-place leaky ReLU written as a custom autograd Function:
`forward` modifies its input in place and declares it with `ctx.mark_dirty`, `backward`
recovers the slope from the saved output."""
import torch
import torch.nn as nn

torch.manual_seed(0)


class InplaceLeakyReLU(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, slope):
        x.mul_(torch.where(x > 0, 1.0, slope))
        ctx.mark_dirty(x)
        ctx.save_for_backward(x)
        ctx.slope = slope
        return x

    @staticmethod
    def backward(ctx, grad):
        (y,) = ctx.saved_tensors
        return grad * torch.where(y > 0, 1.0, ctx.slope), None


class Block(nn.Module):
    def __init__(self, dim=32):
        super().__init__()
        self.fc1, self.fc2 = nn.Linear(dim, 4 * dim), nn.Linear(4 * dim, dim)

    def forward(self, x):
        return x + self.fc2(InplaceLeakyReLU.apply(self.fc1(x), 0.01))


model = nn.Sequential(Block(), Block())
cmodel = torch.compile(model)
opt = torch.optim.SGD(model.parameters(), lr=0.01)
for step in range(4):
    loss = cmodel(torch.randn(8, 32)).pow(2).mean()
    loss.backward()
    opt.step()
    opt.zero_grad()
print(f"loss {loss.item():.4f}")
