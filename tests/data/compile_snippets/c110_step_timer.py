import time

import torch
import torch.nn as nn

torch.manual_seed(0)

model = nn.Sequential(nn.Linear(64, 128), nn.GELU(), nn.Linear(128, 64))


@torch.compile
def timed_forward(x):
    start = time.time()
    y = model(x)
    return y, time.time() - start


timings = []
with torch.no_grad():
    for _ in range(4):
        y, seconds = timed_forward(torch.randn(32, 64))
        timings.append(seconds)
print(y.shape, len(timings))
