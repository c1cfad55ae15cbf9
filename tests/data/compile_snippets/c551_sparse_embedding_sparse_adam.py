"""Two-tower retrieval model for a recommender with large id vocabularies: the user and item
tables are `nn.Embedding(..., sparse=True)` so that backward produces sparse row gradients, stepped
by `torch.optim.SparseAdam`, while the dense towers use Adam; the scoring model is compiled and
trained with in-batch negatives."""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
USERS, ITEMS, DIM = 5000, 8000, 32


class TwoTower(nn.Module):
    def __init__(self):
        super().__init__()
        self.user_table = nn.Embedding(USERS, DIM, sparse=True)
        self.item_table = nn.Embedding(ITEMS, DIM, sparse=True)
        self.user_tower = nn.Sequential(nn.Linear(DIM, 64), nn.ReLU(), nn.Linear(64, DIM))
        self.item_tower = nn.Sequential(nn.Linear(DIM, 64), nn.ReLU(), nn.Linear(64, DIM))

    def forward(self, user_ids, item_ids):
        u = F.normalize(self.user_tower(self.user_table(user_ids)), dim=-1)
        v = F.normalize(self.item_tower(self.item_table(item_ids)), dim=-1)
        return u @ v.T / 0.05


model = TwoTower()
compiled = torch.compile(model)
sparse_opt = torch.optim.SparseAdam([model.user_table.weight, model.item_table.weight], lr=1e-2)
dense_opt = torch.optim.Adam([*model.user_tower.parameters(), *model.item_tower.parameters()], lr=1e-3)
for it in range(4):
    users, items = torch.randint(0, USERS, (64,)), torch.randint(0, ITEMS, (64,))
    scores = compiled(users, items)
    loss = F.cross_entropy(scores, torch.arange(64))
    loss.backward()
    sparse_opt.step()
    dense_opt.step()
    sparse_opt.zero_grad()
    dense_opt.zero_grad()
print(f"loss {loss.item():.4f}")
