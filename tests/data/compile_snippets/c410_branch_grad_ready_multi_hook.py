"""Two-branch fusion network that logs when both branches have received their gradients.

For a gradient-flow check, `forward` registers one hook over the two branch outputs with
`torch.autograd.graph.register_multi_grad_hook`; it fires once the gradients of both are
computed and records which of them actually got a gradient.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.autograd.graph import register_multi_grad_hook

torch.manual_seed(0)
GRAD_LOG = []


class FusionNet(nn.Module):
    def __init__(self, dim=32):
        super().__init__()
        self.audio = nn.Sequential(nn.Linear(20, dim), nn.ReLU())
        self.video = nn.Sequential(nn.Linear(48, dim), nn.ReLU())
        self.head = nn.Linear(2 * dim, 4)

    def _record(self, grads):
        GRAD_LOG.append(tuple(g is not None for g in grads))

    def forward(self, audio, video):
        a, v = self.audio(audio), self.video(video)
        register_multi_grad_hook((a, v), self._record)
        return self.head(torch.cat([a, v], dim=-1))


model = FusionNet()
compiled = torch.compile(model)
opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
for step in range(4):
    logits = compiled(torch.randn(8, 20), torch.randn(8, 48))
    loss = F.cross_entropy(logits, torch.randint(0, 4, (8,)))
    loss.backward()
    opt.step()
    opt.zero_grad()
print(GRAD_LOG[-1], round(loss.item(), 3))
