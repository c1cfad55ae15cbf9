"""Activation offloading for a deep MLP stack: an OffloadedBlock wrapper keeps the tensors saved
for backward in host memory by entering torch.autograd.graph.save_on_cpu around its inner
block, and the whole stack is compiled."""
import torch
import torch.nn as nn

torch.manual_seed(0)


class MLPBlock(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.norm = nn.LayerNorm(dim)
        self.ff = nn.Sequential(nn.Linear(dim, 4 * dim), nn.GELU(), nn.Linear(4 * dim, dim))

    def forward(self, x):
        return x + self.ff(self.norm(x))


class OffloadedBlock(nn.Module):
    def __init__(self, block, pin_memory=False):
        super().__init__()
        self.block = block
        self.pin_memory = pin_memory

    def forward(self, x):
        with torch.autograd.graph.save_on_cpu(pin_memory=self.pin_memory):
            return self.block(x)


class Stack(nn.Module):
    def __init__(self, dim=32, depth=3):
        super().__init__()
        self.blocks = nn.ModuleList(OffloadedBlock(MLPBlock(dim)) for _ in range(depth))

    def forward(self, x):
        for block in self.blocks:
            x = block(x)
        return x


model = Stack()
cmodel = torch.compile(model)
opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
for _ in range(3):
    loss = cmodel(torch.randn(4, 16, 32)).pow(2).mean()
    loss.backward()
    opt.step()
    opt.zero_grad()
print(float(loss))
