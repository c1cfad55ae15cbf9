import torch
import torch.nn as nn

torch.manual_seed(0)


class MLP(nn.Module):
    def __init__(self, depth):
        super().__init__()
        self.depth = depth
        self.fc = nn.Linear(8, 8)

    def forward(self, x):
        for _ in range(self.depth):
            x = self.fc(x).relu()
        return x


teacher = torch.compile(MLP(4))
student = torch.compile(MLP(2))
with torch.no_grad():
    for _ in range(10):
        x = torch.randn(3, 8)
        loss = (teacher(x) - student(x)).pow(2).mean()
