# Activation checkpointing: each residual block runs through torch_xla.utils.checkpoint (the
# reentrant form, the one PyTorch/XLA supports), so its forward is recomputed during backward.
import torch
import torch_xla
import torch_xla.utils.checkpoint as checkpoint
import torch_xla.core.xla_model as xm

device = xm.xla_device()
torch.manual_seed(64)


class Block(torch.nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.norm = torch.nn.LayerNorm(dim)
        self.fc1 = torch.nn.Linear(dim, 2 * dim)
        self.fc2 = torch.nn.Linear(2 * dim, dim)

    def forward(self, x):
        return x + self.fc2(torch.relu(self.fc1(self.norm(x))))


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.inp = torch.nn.Linear(12, 12)
        self.blocks = torch.nn.ModuleList(Block(12) for _ in range(3))
        self.out = torch.nn.Linear(12, 1)

    def forward(self, x):
        x = self.inp(x)
        for block in self.blocks:
            x = checkpoint.checkpoint(block, x)
        return self.out(x)


model = Net().to(device)
opt = torch.optim.SGD(model.parameters(), lr=0.05)
for step in range(7):
    xc = torch.randn(10, 12)
    x, target = xc.to(device), xc.sum(1, keepdim=True).to(device)
    loss = torch.nn.functional.mse_loss(model(x), target)
    opt.zero_grad()
    loss.backward()
    opt.step()
    xm.mark_step()
print("final loss", loss.item())
