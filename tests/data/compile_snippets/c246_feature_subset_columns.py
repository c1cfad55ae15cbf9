"""Tabular training with random feature subsets: every batch the trainer draws which input columns the
MLP may see (a sorted list of column indices from random.sample) and the compiled step gathers those
columns and zero-fills the rest, so the model learns not to rely on any single feature."""
import random

import torch
import torch.nn as nn
import torch.nn.functional as F

random.seed(0)
torch.manual_seed(0)
N_FEATURES = 24

model = nn.Sequential(nn.Linear(N_FEATURES, 64), nn.ReLU(), nn.Linear(64, 1))
opt = torch.optim.Adam(model.parameters(), lr=1e-3)


def keep_columns(x, columns):
    kept = torch.zeros_like(x)
    kept[:, columns] = x[:, columns]
    return kept


@torch.compile
def train_step(x, y, columns):
    pred = model(keep_columns(x, columns))
    return F.mse_loss(pred, y)


for step in range(10):
    x, y = torch.randn(32, N_FEATURES), torch.randn(32, 1)
    columns = sorted(random.sample(range(N_FEATURES), 18))
    loss = train_step(x, y, columns)
    loss.backward()
    opt.step()
    opt.zero_grad()
print(f"loss {loss.item():.4f}")
