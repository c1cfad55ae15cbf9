"""Multi-view contrastive pretraining with one encoder per camera view.

Three cameras film the same scene; each view has its own encoder (same architecture, separate
weights), and each encoder is wrapped with `torch.compile` on its own. The loss pulls the
embeddings of the same scene together across every pair of views.
"""
import itertools

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
VIEWS = ("left", "front", "right")


class ViewEncoder(nn.Module):
    def __init__(self, dim=32):
        super().__init__()
        self.conv = nn.Sequential(nn.Conv2d(3, 8, 3, stride=2, padding=1), nn.ReLU(),
                                  nn.Conv2d(8, 16, 3, stride=2, padding=1), nn.ReLU())
        self.proj = nn.Linear(16, dim)

    def forward(self, images):
        return F.normalize(self.proj(self.conv(images).mean((2, 3))), dim=-1)


encoders = {v: ViewEncoder() for v in VIEWS}
compiled = {v: torch.compile(enc) for v, enc in encoders.items()}
params = [p for enc in encoders.values() for p in enc.parameters()]
opt = torch.optim.AdamW(params, lr=1e-3)

for step in range(3):
    batch = {v: torch.randn(8, 3, 32, 32) for v in VIEWS}
    embeds = {v: compiled[v](batch[v]) for v in VIEWS}
    targets = torch.arange(8)
    loss = sum(F.cross_entropy(embeds[a] @ embeds[b].T / 0.1, targets)
               for a, b in itertools.combinations(VIEWS, 2))
    loss.backward()
    opt.step()
    opt.zero_grad()
print(round(loss.item(), 3))
