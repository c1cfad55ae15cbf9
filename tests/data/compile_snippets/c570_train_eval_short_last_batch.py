"""A plain tabular classifier training script: the model is compiled once, trained on a
`DataLoader` with `batch_size=32` over 100 rows (the last batch of the epoch has 4), and validated
at the end of every epoch under `model.eval()` and `torch.no_grad()` on a loader of the same batch
size, before `model.train()` switches it back."""
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset

torch.manual_seed(0)


class MLPClassifier(nn.Module):
    def __init__(self, features=20, hidden=64, classes=4, dropout=0.2):
        super().__init__()
        self.fc1 = nn.Linear(features, hidden)
        self.drop = nn.Dropout(dropout)
        self.fc2 = nn.Linear(hidden, classes)

    def forward(self, x):
        return self.fc2(self.drop(F.relu(self.fc1(x))))


train_set = TensorDataset(torch.randn(100, 20), torch.randint(0, 4, (100,)))
val_set = TensorDataset(torch.randn(64, 20), torch.randint(0, 4, (64,)))
train_loader = DataLoader(train_set, batch_size=32, shuffle=True)
val_loader = DataLoader(val_set, batch_size=32)

model = MLPClassifier()
compiled_model = torch.compile(model)
opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
for epoch in range(3):
    model.train()
    for x, y in train_loader:
        loss = F.cross_entropy(compiled_model(x), y)
        loss.backward()
        opt.step()
        opt.zero_grad()
    model.eval()
    correct = 0
    with torch.no_grad():
        for x, y in val_loader:
            correct += (compiled_model(x).argmax(1) == y).sum().item()
    print(f"epoch {epoch} loss {loss.item():.4f} val acc {correct / len(val_set):.3f}")
