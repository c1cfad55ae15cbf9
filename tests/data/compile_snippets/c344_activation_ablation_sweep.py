"""Ablation sweep over the MLP activation: one compiled train step takes the activation function
as an argument, and the sweep script trains a fresh tabular regressor with ReLU, GELU and SiLU
in turn, passing each function to the same compiled step."""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class Regressor(nn.Module):
    def __init__(self, d_in=10, hidden=32):
        super().__init__()
        self.fc1 = nn.Linear(d_in, hidden)
        self.fc2 = nn.Linear(hidden, hidden)
        self.out = nn.Linear(hidden, 1)

    def forward(self, x, act):
        x = act(self.fc1(x))
        x = act(self.fc2(x))
        return self.out(x).squeeze(-1)


@torch.compile
def train_loss(model, x, y, act):
    return F.mse_loss(model(x, act), y)


results = {}
for act in (F.relu, F.gelu, F.silu):
    torch.manual_seed(0)
    model = Regressor()
    opt = torch.optim.Adam(model.parameters(), lr=1e-2)
    for _ in range(3):
        x = torch.randn(32, 10)
        loss = train_loss(model, x, x.sum(-1), act)
        loss.backward()
        opt.step()
        opt.zero_grad()
    results[act.__name__] = round(loss.item(), 4)
print(results)
