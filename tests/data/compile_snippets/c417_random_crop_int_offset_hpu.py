"""Gaudi training of a small audio classifier: each batch is cut to a random 64-frame window,
the start drawn with a NumPy generator and turned into a Python int before the compiled step."""
import numpy as np
import torch
import torch.nn as nn

try:
    import habana_frameworks.torch.core as htcore
    BACKEND = "hpu_backend"
except ImportError:
    htcore, BACKEND = None, "eager"

torch.manual_seed(0)
rng = np.random.default_rng(0)
WINDOW = 64

model = nn.Sequential(nn.Conv1d(20, 32, 5, padding=2), nn.ReLU(), nn.AdaptiveAvgPool1d(1),
                      nn.Flatten(), nn.Linear(32, 4))
opt = torch.optim.AdamW(model.parameters(), lr=1e-3)


@torch.compile(backend=BACKEND)
def forward_loss(feats, labels, start):
    window = feats[:, :, start:start + WINDOW]
    return nn.functional.cross_entropy(model(window), labels)


for step in range(6):
    feats, labels = torch.randn(8, 20, 100), torch.randint(0, 4, (8,))
    start = int(rng.integers(0, feats.shape[-1] - WINDOW))
    loss = forward_loss(feats, labels, start)
    loss.backward()
    opt.step()
    opt.zero_grad()
    if htcore is not None:
        htcore.mark_step()
print(f"loss {loss.item():.4f}")
