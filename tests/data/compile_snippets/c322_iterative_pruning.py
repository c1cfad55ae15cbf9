"""Iterative magnitude pruning: a compiled MLP classifier is trained for a few steps per
round, and at the end of each round a helper prunes another 20% of each Linear layer's
weights with torch.nn.utils.prune, keeping the same compiled model for the next round."""
import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.nn.utils.prune as prune

torch.manual_seed(0)


class MLP(nn.Module):
    def __init__(self, dim=32, hidden=64, n_cls=4):
        super().__init__()
        self.fc1 = nn.Linear(dim, hidden)
        self.fc2 = nn.Linear(hidden, hidden)
        self.fc3 = nn.Linear(hidden, n_cls)

    def forward(self, x):
        return self.fc3(F.relu(self.fc2(F.relu(self.fc1(x)))))


def prune_round(model, amount=0.2):
    for layer in (model.fc1, model.fc2, model.fc3):
        prune.l1_unstructured(layer, name="weight", amount=amount)


model = MLP()
compiled = torch.compile(model)
opt = torch.optim.SGD(model.parameters(), lr=0.05)
for round_ in range(5):
    for _ in range(3):
        x, y = torch.randn(16, 32), torch.randint(0, 4, (16,))
        loss = F.cross_entropy(compiled(x), y)
        loss.backward()
        opt.step()
        opt.zero_grad()
    prune_round(model)
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
print(float((model.fc1.weight == 0).float().mean()))
