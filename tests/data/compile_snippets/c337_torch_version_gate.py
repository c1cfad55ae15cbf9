"""Diffusers-style down block with gradient checkpointing: inside forward, when checkpointing is
on, the block picks the checkpoint keyword arguments by comparing the installed torch version
(`packaging.version.parse(torch.__version__)`) with the release that added `use_reentrant`, then
checkpoints each resnet; the UNet-like model is compiled and trained for a few steps."""
import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.utils.checkpoint
from packaging import version

torch.manual_seed(0)


def torch_at_least(minimum):
    return version.parse(version.parse(torch.__version__).base_version) >= version.parse(minimum)


class ResBlock(nn.Module):
    def __init__(self, ch):
        super().__init__()
        self.norm = nn.GroupNorm(4, ch)
        self.conv = nn.Conv2d(ch, ch, 3, padding=1)

    def forward(self, x):
        return x + self.conv(F.silu(self.norm(x)))


class DownBlock(nn.Module):
    def __init__(self, ch=8, layers=2):
        super().__init__()
        self.resnets = nn.ModuleList(ResBlock(ch) for _ in range(layers))
        self.down = nn.Conv2d(ch, ch, 3, stride=2, padding=1)
        self.gradient_checkpointing = True

    def forward(self, x):
        for resnet in self.resnets:
            if self.training and self.gradient_checkpointing:
                ckpt_kwargs = {"use_reentrant": False} if torch_at_least("1.11.0") else {}
                x = torch.utils.checkpoint.checkpoint(resnet, x, **ckpt_kwargs)
            else:
                x = resnet(x)
        return self.down(x)


block = DownBlock()
opt = torch.optim.SGD(block.parameters(), lr=0.01)
compiled = torch.compile(block)
for _ in range(3):
    out = compiled(torch.randn(2, 8, 16, 16))
    out.pow(2).mean().backward()
    opt.step()
    opt.zero_grad()
print(out.shape)
