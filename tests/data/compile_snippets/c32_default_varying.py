import torch
import torch.nn as nn

torch.manual_seed(0)

model = torch.compile(nn.Sequential(nn.Linear(5, 8), nn.ReLU()))
with torch.no_grad():
    for bs in (3, 5, 8, 13, 21, 34, 55, 89, 144, 233):
        model(torch.randn(bs, 5))
