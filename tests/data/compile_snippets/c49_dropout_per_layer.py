import torch
import torch.nn as nn

torch.manual_seed(0)


class Layer(nn.Module):
    def __init__(self, width, p):
        super().__init__()
        self.fc = nn.Linear(width, width)
        self.p = p

    def forward(self, x):
        return nn.functional.dropout(self.fc(x).relu(), p=self.p, training=self.training)


layers = [torch.compile(Layer(8, 0.05 * i)) for i in range(10)]
x = torch.randn(4, 8)
for layer in layers:
    x = layer(x)
print(x.shape)
