import torch
import torch.nn as nn

torch.manual_seed(0)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(3, 3)

    def forward(self, x):
        y = self.fc(x)
        print(f"y norm {y.norm():.3f}")
        return y


net = torch.compile(Net(), backend="openxla")
with torch.no_grad():
    for _ in range(3):
        net(torch.randn(2, 3))
