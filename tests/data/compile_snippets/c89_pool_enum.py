import enum

import torch
import torch.nn as nn

torch.manual_seed(0)


class Pooling(enum.Enum):
    MEAN = "mean"
    MAX = "max"
    CLS = "cls"


class Encoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.layer = nn.TransformerEncoderLayer(32, 4, 64, batch_first=True)

    def forward(self, x, pooling):
        h = self.layer(x)
        if pooling is Pooling.MEAN:
            return h.mean(1)
        if pooling is Pooling.MAX:
            return h.amax(1)
        return h[:, 0]


enc = torch.compile(Encoder().eval())
with torch.no_grad():
    for _ in range(2):
        for pooling in Pooling:
            print(pooling.value, enc(torch.randn(2, 6, 32), pooling).shape)
