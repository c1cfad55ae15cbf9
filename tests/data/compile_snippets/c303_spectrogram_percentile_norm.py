# Audio tagging front end: log-spectrogram features are normalized per clip with a robust
# percentile range computed in NumPy (the preprocessing was ported from a NumPy pipeline), then
# fed to a small classifier; normalization and model run in one compiled function.
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)

classifier = nn.Sequential(nn.Flatten(), nn.Linear(32 * 20, 64), nn.ReLU(), nn.Linear(64, 5))


def robust_normalize(spec):
    values = spec.numpy()
    lo, hi = np.percentile(values, [2.0, 98.0])
    clipped = np.clip(values, lo, hi)
    return torch.from_numpy((clipped - lo) / (hi - lo + 1e-6))


def forward(spec):
    with torch.no_grad():
        feats = torch.stack([robust_normalize(s) for s in spec.log1p().unbind(0)])
    return classifier(feats)


compiled = torch.compile(forward)
opt = torch.optim.Adam(classifier.parameters(), lr=1e-3)
for step in range(4):
    spec = torch.rand(4, 32, 20) * 100
    labels = torch.randint(0, 5, (4,))
    loss = F.cross_entropy(compiled(spec), labels)
    loss.backward()
    opt.step()
    opt.zero_grad()
print(loss.item())
