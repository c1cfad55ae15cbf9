import torch
import torch.nn as nn
import habana_frameworks.torch.core as htcore

torch.manual_seed(0)

model = nn.Sequential(nn.Linear(10, 16), nn.ReLU(), nn.Linear(16, 2))
model = torch.compile(model, backend="hpu_backend")
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for step in range(6):
    out = model(torch.randn(4, 10))
    loss = out.pow(2).mean()
    loss.backward()
    opt.step()
    opt.zero_grad()
    htcore.mark_step()
