import torch
import torch.nn as nn

torch.manual_seed(0)

model = torch.compile(nn.Sequential(nn.Linear(5, 8), nn.ReLU()), dynamic=False)
with torch.no_grad():
    for bs in (3, 5, 8, 13, 21, 34, 55, 89, 144, 233):
        batch = torch.randn(bs, 5)
        torch._dynamo.mark_dynamic(batch, 0)
        model(batch)
