"""Shape tracing while debugging a port: each encoder block calls a small helper that appends a
JSON line with the block name and the output shape to a trace file (opened in append mode on
every call), and the encoder is compiled for the training loop with the tracing left on."""
import json
import os
import tempfile

import torch
import torch.nn as nn

torch.manual_seed(0)
TRACE_PATH = os.path.join(tempfile.mkdtemp(), "shapes.jsonl")


def trace_shape(name, t):
    with open(TRACE_PATH, "a") as fh:
        fh.write(json.dumps({"block": name, "shape": list(t.shape)}) + "\n")


class Block(nn.Module):
    def __init__(self, name, dim=16):
        super().__init__()
        self.name = name
        self.ff = nn.Sequential(nn.LayerNorm(dim), nn.Linear(dim, dim), nn.GELU())

    def forward(self, x):
        out = x + self.ff(x)
        trace_shape(self.name, out)
        return out


encoder = nn.Sequential(Block("block0"), Block("block1"))
compiled = torch.compile(encoder)
opt = torch.optim.SGD(encoder.parameters(), lr=0.01)
for _ in range(3):
    out = compiled(torch.randn(4, 6, 16))
    out.pow(2).mean().backward()
    opt.step()
    opt.zero_grad()
with open(TRACE_PATH) as fh:
    print(len(fh.readlines()), "trace lines")
