# A two-tower retrieval model whose item and user embeddings are kept inside the unit ball by
# nn.Embedding(max_norm=1.0), which renormalizes the looked-up rows in place on every forward.
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class TwoTower(nn.Module):
    def __init__(self, n_users=100, n_items=200, dim=16):
        super().__init__()
        self.users = nn.Embedding(n_users, dim, max_norm=1.0)
        self.items = nn.Embedding(n_items, dim, max_norm=1.0)
        self.user_mlp = nn.Sequential(nn.Linear(dim, dim), nn.ReLU(), nn.Linear(dim, dim))

    def forward(self, user_ids, item_ids):
        u = self.user_mlp(self.users(user_ids))
        v = self.items(item_ids)
        return u @ v.T / 0.1


model = TwoTower()
compiled = torch.compile(model)
opt = torch.optim.Adam(model.parameters(), lr=1e-2)
for step in range(5):
    users = torch.randint(0, 100, (8,))
    items = torch.randint(0, 200, (8,))
    logits = compiled(users, items)
    loss = F.cross_entropy(logits, torch.arange(8))
    loss.backward()
    opt.step()
    opt.zero_grad()
print(loss.item())
