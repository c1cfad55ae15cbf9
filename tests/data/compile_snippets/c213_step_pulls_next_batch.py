"""A compact training script whose compiled train step draws its own batch from the DataLoader's
iterator, computes the loss and returns it for the backward pass."""
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset

torch.manual_seed(0)

data = TensorDataset(torch.randn(128, 20), torch.randint(0, 4, (128,)))
loader = DataLoader(data, batch_size=16, shuffle=True)
model = nn.Sequential(nn.Linear(20, 64), nn.GELU(), nn.Linear(64, 4))
opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
batches = iter(loader)


def train_step():
    features, labels = next(batches)
    return nn.functional.cross_entropy(model(features), labels)


step = torch.compile(train_step)
for _ in range(6):
    loss = step()
    loss.backward()
    opt.step()
    opt.zero_grad()
print(f"loss {loss.item():.4f}")
