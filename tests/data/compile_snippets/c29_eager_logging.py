import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)

model = torch.compile(nn.Linear(12, 3))
opt = torch.optim.Adam(model.parameters(), lr=1e-2)
losses = []
for step in range(8):
    x, y = torch.randn(4, 12), torch.randint(0, 3, (4,))
    loss = F.cross_entropy(model(x), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    losses.append(loss.item())
    if losses[-1] != losses[-1]:
        print("nan at", step)
