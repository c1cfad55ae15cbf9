import numpy as np
import torch
import torch.nn as nn

torch.manual_seed(0)
np.random.seed(0)

net = nn.Sequential(nn.Conv1d(1, 8, 5, padding=2), nn.ReLU(), nn.AdaptiveAvgPool1d(1), nn.Flatten(), nn.Linear(8, 2))
opt = torch.optim.SGD(net.parameters(), lr=0.1)


@torch.compile
def augmented_loss(signal, target):
    gain = np.random.uniform(0.8, 1.2)
    noise = torch.randn_like(signal) * 0.01
    out = net(signal * gain + noise)
    return nn.functional.cross_entropy(out, target)


for _ in range(4):
    loss = augmented_loss(torch.randn(4, 1, 64), torch.randint(0, 2, (4,)))
    loss.backward()
    opt.step()
    opt.zero_grad()
