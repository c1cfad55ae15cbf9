"""Selective activation checkpointing in a compiled transformer MLP: each block is run through
non-reentrant torch.utils.checkpoint with a context_fn built by
create_selective_checkpoint_contexts, whose policy saves matmul outputs and recomputes the
rest."""
import functools

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.checkpoint import CheckpointPolicy, checkpoint, create_selective_checkpoint_contexts

torch.manual_seed(0)


def save_matmuls(ctx, op, *args, **kwargs):
    if op in (torch.ops.aten.mm.default, torch.ops.aten.addmm.default):
        return CheckpointPolicy.MUST_SAVE
    return CheckpointPolicy.PREFER_RECOMPUTE


class Block(nn.Module):
    def __init__(self, dim=32):
        super().__init__()
        self.norm = nn.LayerNorm(dim)
        self.ff = nn.Sequential(nn.Linear(dim, 4 * dim), nn.GELU(), nn.Linear(4 * dim, dim))

    def forward(self, x):
        return x + self.ff(self.norm(x))


class Model(nn.Module):
    def __init__(self, depth=4, dim=32):
        super().__init__()
        self.blocks = nn.ModuleList(Block(dim) for _ in range(depth))
        self.head = nn.Linear(dim, 2)
        self.context_fn = functools.partial(create_selective_checkpoint_contexts, save_matmuls)

    def forward(self, x):
        for block in self.blocks:
            x = checkpoint(block, x, use_reentrant=False, context_fn=self.context_fn)
        return self.head(x.mean(1))


model = Model()
compiled = torch.compile(model)
opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
for _ in range(3):
    loss = F.cross_entropy(compiled(torch.randn(4, 10, 32)), torch.randint(0, 2, (4,)))
    loss.backward()
    opt.step()
    opt.zero_grad()
print(loss)
