"""Train a residual MLP while recording per-block activation statistics for a dashboard.

Each block reports its output to the recorder on every forward pass; the recorder keeps Python
lists of summary tensors per block. The model is compiled.
"""
import torch
import torch.nn as nn

torch.manual_seed(0)


class ActivationRecorder:
    def __init__(self):
        self.history = {}

    @torch.compiler.disable
    def record(self, name, t):
        t = t.detach()
        self.history.setdefault(name, []).append((t.mean(), t.std(), t.abs().max()))


recorder = ActivationRecorder()


class Block(nn.Module):
    def __init__(self, dim, name):
        super().__init__()
        self.name = name
        self.norm = nn.LayerNorm(dim)
        self.ff = nn.Sequential(nn.Linear(dim, 2 * dim), nn.GELU(), nn.Linear(2 * dim, dim))

    def forward(self, x):
        h = self.ff(self.norm(x))
        recorder.record(self.name, h)
        return x + h


model = nn.Sequential(*[Block(16, f"block{i}") for i in range(3)], nn.Linear(16, 1))
cmodel = torch.compile(model)
opt = torch.optim.SGD(model.parameters(), lr=0.01)
for _ in range(4):
    x, y = torch.randn(8, 16), torch.randn(8, 1)
    loss = (cmodel(x) - y).pow(2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
print({k: len(v) for k, v in recorder.history.items()})
