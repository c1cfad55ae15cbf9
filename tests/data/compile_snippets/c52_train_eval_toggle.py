import torch
import torch.nn as nn

torch.manual_seed(0)
net = nn.Sequential(nn.Linear(6, 6), nn.BatchNorm1d(6), nn.ReLU(), nn.Linear(6, 1))
cnet = torch.compile(net)

for epoch in range(5):
    net.train()
    for _ in range(3):
        cnet(torch.randn(8, 6)).sum().backward()
    net.eval()
    with torch.no_grad():
        cnet(torch.randn(8, 6))
