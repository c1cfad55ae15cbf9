"""MFU logging for a compiled language-model block on an XLA device: a FlopMeter wrapper runs
the wrapped module under torch.utils.flop_counter.FlopCounterMode and keeps the FLOPs of the
last forward for the throughput logger."""
import torch
import torch.nn as nn
from torch.utils.flop_counter import FlopCounterMode

torch.manual_seed(0)


class FlopMeter(nn.Module):
    def __init__(self, inner):
        super().__init__()
        self.inner = inner
        self.last_flops = 0

    def forward(self, x):
        with FlopCounterMode(display=False) as counter:
            out = self.inner(x)
        self.last_flops = counter.get_total_flops()
        return out


block = nn.TransformerEncoderLayer(32, 4, 64, batch_first=True, dropout=0.0)
model = torch.compile(FlopMeter(block), backend="openxla")
opt = torch.optim.AdamW(block.parameters(), lr=1e-3)
for _ in range(3):
    loss = model(torch.randn(2, 8, 32)).pow(2).mean()
    loss.backward()
    opt.step()
    opt.zero_grad()
print(float(loss), model.last_flops)
