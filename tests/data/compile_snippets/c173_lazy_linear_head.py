"""Transfer learning with a lazily sized classification head: the head's input width is
inferred from the first batch instead of being hard-coded for the backbone, and the whole
model is compiled before the first forward pass."""
import torch
import torch.nn as nn

torch.manual_seed(0)

backbone = nn.Sequential(nn.Conv2d(3, 12, 3, stride=2), nn.ReLU(), nn.Conv2d(12, 12, 3), nn.ReLU(),
                         nn.AdaptiveAvgPool2d(2), nn.Flatten())
model = nn.Sequential(backbone, nn.LazyLinear(64), nn.ReLU(), nn.LazyLinear(7))
cmodel = torch.compile(model)

x = torch.randn(4, 3, 20, 20)
y = torch.randint(0, 7, (4,))
opt = None
for _ in range(4):
    loss = nn.functional.cross_entropy(cmodel(x), y)
    if opt is None:
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
    opt.zero_grad()
    loss.backward()
    opt.step()
print(loss.item())
