# Stochastic weight averaging: the model trains compiled, an AveragedModel collects the
# weights over the last epochs, and before evaluation torch.optim.swa_utils.update_bn
# recomputes the BatchNorm statistics by running the compiled averaged model over the data.
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.optim.swa_utils import AveragedModel, update_bn

torch.manual_seed(0)

model = nn.Sequential(nn.Linear(12, 32), nn.BatchNorm1d(32), nn.ReLU(), nn.Linear(32, 2))
compiled = torch.compile(model)
swa_model = AveragedModel(model)
compiled_swa = torch.compile(swa_model)
opt = torch.optim.SGD(model.parameters(), lr=0.05)
loader = [(torch.randn(16, 12), torch.randint(0, 2, (16,))) for _ in range(4)]

for epoch in range(3):
    for x, y in loader:
        loss = F.cross_entropy(compiled(x), y)
        loss.backward()
        opt.step()
        opt.zero_grad()
    if epoch >= 1:
        swa_model.update_parameters(model)

update_bn((x for x, _ in loader), compiled_swa)
compiled_swa.eval()
with torch.no_grad():
    acc = sum((compiled_swa(x).argmax(-1) == y).float().mean() for x, y in loader) / len(loader)
print(acc.item())
