import torch
import torch.nn as nn

torch.manual_seed(0)


class Head(nn.Module):
    def __init__(self, width):
        super().__init__()
        self.width = width
        self.fc = nn.Linear(16, 16)

    def forward(self, x):
        return self.fc(x)[..., : self.width]


heads = [torch.compile(Head(w)) for w in range(2, 14)]
with torch.no_grad():
    x = torch.randn(3, 16)
    outs = [h(x) for h in heads]
