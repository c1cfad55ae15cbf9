import torch
import torch.nn as nn

torch.manual_seed(0)


class Smoother(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv1d(6, 6, kernel_size=3, padding=1)

    def forward(self, x):
        return self.conv(x.transpose(1, 2)).transpose(1, 2).relu()


encode = torch.compile(Smoother(), dynamic=False)
with torch.no_grad():
    for length in (5, 9, 13, 17, 21, 25, 29, 33, 37, 41):
        encode(torch.randn(2, length, 6))
