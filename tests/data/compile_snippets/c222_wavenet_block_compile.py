"""WaveNet-style audio model on Gaudi: a stack of gated residual blocks with dilations doubling
from 1 to 512; each block's forward is run through one compiled helper."""
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


blocks = nn.ModuleList(GatedResidualBlock(16, 2 ** i) for i in range(10))
head = nn.Conv1d(16, 1, kernel_size=1)


@torch.compile(backend="hpu_backend")
def run_block(block, x):
    return block(x)


opt = torch.optim.Adam(list(blocks.parameters()) + list(head.parameters()), lr=1e-3)
for step in range(3):
    x = torch.randn(4, 16, 256)
    for block in blocks:
        x = run_block(block, x)
    loss = head(x).pow(2).mean()
    loss.backward()
    opt.step()
    opt.zero_grad()
    htcore.mark_step()
print(f"loss {loss.item():.4f}")
