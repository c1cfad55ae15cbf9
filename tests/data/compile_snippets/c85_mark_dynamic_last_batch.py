import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset

torch.manual_seed(0)

data = TensorDataset(torch.randn(70, 10), torch.randint(0, 3, (70,)))
loader = DataLoader(data, batch_size=16, shuffle=True)
model = nn.Sequential(nn.Linear(10, 32), nn.ReLU(), nn.Linear(32, 3))
opt = torch.optim.Adam(model.parameters(), lr=1e-3)
cmodel = torch.compile(model)

for epoch in range(2):
    for x, y in loader:
        torch._dynamo.mark_dynamic(x, 0)
        loss = F.cross_entropy(cmodel(x), y)
        loss.backward()
        opt.step()
        opt.zero_grad()
    print(epoch, loss.item())
