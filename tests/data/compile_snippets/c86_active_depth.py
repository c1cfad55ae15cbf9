import torch
import torch.nn as nn

torch.manual_seed(0)


class GrowingNet(nn.Module):
    """Progressive training: one more block becomes active every epoch."""

    def __init__(self, dim=16, depth=6):
        super().__init__()
        self.blocks = nn.ModuleList(nn.Linear(dim, dim) for _ in range(depth))
        self.active = 1

    def forward(self, x):
        for block in self.blocks[: self.active]:
            x = torch.relu(block(x)) + x
        return x


net = GrowingNet()
cnet = torch.compile(net)
opt = torch.optim.SGD(net.parameters(), lr=0.01)
for epoch in range(6):
    net.active = epoch + 1
    for _ in range(2):
        cnet(torch.randn(4, 16)).square().mean().backward()
        opt.step()
        opt.zero_grad()
