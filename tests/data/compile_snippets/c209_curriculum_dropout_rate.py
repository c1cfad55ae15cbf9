"""Curriculum dropout: an image classifier starts with little dropout and a per-epoch schedule
raises the rate of its dropout layers as training goes on."""
import torch
import torch.nn as nn

torch.manual_seed(0)


class SmallCNN(nn.Module):
    def __init__(self, classes=10):
        super().__init__()
        self.features = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.ReLU(), nn.AdaptiveAvgPool2d(4))
        self.drop = nn.Dropout(0.0)
        self.head = nn.Linear(8 * 16, classes)

    def forward(self, x):
        return self.head(self.drop(self.features(x).flatten(1)))


def dropout_schedule(epoch, final=0.5, ramp=5):
    return final * min(1.0, epoch / ramp)


model = SmallCNN()
cmodel = torch.compile(model)
opt = torch.optim.SGD(model.parameters(), lr=0.05)
for epoch in range(6):
    for m in model.modules():
        if isinstance(m, nn.Dropout):
            m.p = dropout_schedule(epoch)
    for _ in range(2):
        loss = nn.functional.cross_entropy(cmodel(torch.randn(8, 3, 16, 16)), torch.randint(0, 10, (8,)))
        loss.backward()
        opt.step()
        opt.zero_grad()
print(f"loss {loss.item():.4f}")
