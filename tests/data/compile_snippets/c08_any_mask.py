import torch
import torch.nn as nn

torch.manual_seed(0)


class Gate(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)

    def forward(self, x, pad):
        y = self.fc(x)
        if pad.any():
            y = y.masked_fill(pad.unsqueeze(-1), 0.0)
        return y


g = torch.compile(Gate())
with torch.no_grad():
    for i in range(4):
        g(torch.randn(3, 4), torch.rand(3) > 0.5)
