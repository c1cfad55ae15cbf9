"""Adapter-aware encoder: blocks that support a low-rank update satisfy a `typing.Protocol`
(`@runtime_checkable`, one `lora_delta` method), and the compiled `forward` adds each capable
block's delta after an `isinstance(block, SupportsLoRA)` test, so plain blocks and adapted blocks
can be mixed in one stack."""
from typing import Protocol, runtime_checkable

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


@runtime_checkable
class SupportsLoRA(Protocol):
    def lora_delta(self, x): ...


class AdaptedLinear(nn.Linear):
    def __init__(self, dim, rank=4):
        super().__init__(dim, dim)
        self.down = nn.Linear(dim, rank, bias=False)
        self.up = nn.Linear(rank, dim, bias=False)
        nn.init.zeros_(self.up.weight)

    def lora_delta(self, x):
        return self.up(self.down(x))


class Encoder(nn.Module):
    def __init__(self, dim=32, depth=4, classes=6):
        super().__init__()
        self.blocks = nn.ModuleList(AdaptedLinear(dim) if i % 2 else nn.Linear(dim, dim)
                                    for i in range(depth))
        self.head = nn.Linear(dim, classes)

    def forward(self, x):
        for block in self.blocks:
            h = block(x)
            if isinstance(block, SupportsLoRA):
                h = h + block.lora_delta(x)
            x = F.gelu(h)
        return self.head(x)


model = Encoder()
for name, p in model.named_parameters():
    p.requires_grad_("down" in name or "up" in name or "head" in name)
step_model = torch.compile(model)
opt = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=1e-3)
for step in range(5):
    x, y = torch.randn(16, 32), torch.randint(0, 6, (16,))
    loss = F.cross_entropy(step_model(x), y)
    loss.backward()
    opt.step()
    opt.zero_grad()
print(f"loss {loss.item():.4f}")
