"""WaveNet-style audio model on Gaudi: a stack of gated residual blocks with dilations doubling
from 1 to 512, compiled as one model."""
import habana_frameworks.torch.core as htcore
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class GatedResidualBlock(nn.Module):
    def __init__(self, channels, dilation):
        super().__init__()
        self.dilation = dilation
        self.conv = nn.Conv1d(channels, 2 * channels, kernel_size=2, dilation=dilation)
        self.res = nn.Conv1d(channels, channels, kernel_size=1)

    def forward(self, x):
        h = self.conv(F.pad(x, (self.dilation, 0)))
        a, b = h.chunk(2, dim=1)
        return x + self.res(torch.tanh(a) * torch.sigmoid(b))


class WaveNet(nn.Module):
    def __init__(self, channels=16, n_blocks=10):
        super().__init__()
        self.blocks = nn.ModuleList(GatedResidualBlock(channels, 2 ** i) for i in range(n_blocks))
        self.head = nn.Conv1d(channels, 1, kernel_size=1)

    def forward(self, x):
        for block in self.blocks:
            x = block(x)
        return self.head(x)


model = WaveNet()
cmodel = torch.compile(model, backend="hpu_backend")
opt = torch.optim.Adam(model.parameters(), lr=1e-3)
for step in range(3):
    loss = cmodel(torch.randn(4, 16, 256)).pow(2).mean()
    loss.backward()
    opt.step()
    opt.zero_grad()
    htcore.mark_step()
print(f"loss {loss.item():.4f}")
