"""Encoder fine-tuning with gradient checkpointing enabled the way older model code does it: the
layer loop runs each layer through a checkpoint function bound with functools.partial, using the
re-entrant implementation, and the model is compiled."""
import functools

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.checkpoint import checkpoint

torch.manual_seed(0)


class Layer(nn.Module):
    def __init__(self, dim=32):
        super().__init__()
        self.norm = nn.LayerNorm(dim)
        self.ff = nn.Sequential(nn.Linear(dim, 4 * dim), nn.GELU(), nn.Linear(4 * dim, dim))

    def forward(self, x):
        return x + self.ff(self.norm(x))


class Encoder(nn.Module):
    def __init__(self, n=4, dim=32):
        super().__init__()
        self.layers = nn.ModuleList(Layer(dim) for _ in range(n))
        self.gradient_checkpointing = False
        self._gc_func = None

    def gradient_checkpointing_enable(self, use_reentrant=True):
        self.gradient_checkpointing = True
        self._gc_func = functools.partial(checkpoint, use_reentrant=use_reentrant)

    def forward(self, x):
        for layer in self.layers:
            if self.gradient_checkpointing and self.training:
                x = self._gc_func(layer, x)
            else:
                x = layer(x)
        return x


enc = Encoder()
enc.gradient_checkpointing_enable()
head = nn.Linear(32, 3)
cenc = torch.compile(enc)
opt = torch.optim.AdamW(list(enc.parameters()) + list(head.parameters()), lr=1e-3)
for step in range(4):
    x = torch.randn(4, 10, 32, requires_grad=True)
    loss = F.cross_entropy(head(cenc(x).mean(1)), torch.randint(0, 3, (4,)))
    loss.backward()
    opt.step()
    opt.zero_grad()
print(loss.detach())
