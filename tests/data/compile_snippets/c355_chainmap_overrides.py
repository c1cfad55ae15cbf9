"""Per-experiment overrides layered over library defaults with `collections.ChainMap`: a compiled
feature-normalization head looks up its `eps`, `scale` and `clip` values in
`ChainMap(overrides, DEFAULTS)` inside forward, where `overrides` is a copy of the experiment's
dict passed with every batch."""
from collections import ChainMap

import torch
import torch.nn as nn

torch.manual_seed(0)
DEFAULTS = {"eps": 1e-5, "scale": 1.0, "clip": 5.0}


class NormHead(nn.Module):
    def __init__(self, dim=16, classes=4):
        super().__init__()
        self.fc = nn.Linear(dim, classes)

    def forward(self, feats, overrides):
        cfg = ChainMap(overrides, DEFAULTS)
        mean = feats.mean(-1, keepdim=True)
        std = feats.std(-1, keepdim=True)
        normed = ((feats - mean) / (std + cfg["eps"])).clamp(-cfg["clip"], cfg["clip"])
        return self.fc(normed * cfg["scale"])


head = NormHead()
compiled = torch.compile(head)
opt = torch.optim.SGD(head.parameters(), lr=0.05)
experiment = {"scale": 2.0, "clip": 3.0}
for _ in range(4):
    logits = compiled(torch.randn(8, 16), dict(experiment))
    loss = nn.functional.cross_entropy(logits, torch.randint(0, 4, (8,)))
    loss.backward()
    opt.step()
    opt.zero_grad()
print(loss.item())
