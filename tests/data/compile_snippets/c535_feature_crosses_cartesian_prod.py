"""Factorization-machine click-through model with explicit field crosses: the compiled `forward`
enumerates every (user field, item field) pair with `torch.cartesian_prod` of the two field
index ranges, takes the dot product of each pair's embeddings and feeds the crosses with the
first-order terms to a logistic output."""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
USER_FIELDS, ITEM_FIELDS, BUCKETS, DIM = 4, 3, 100, 16


class CrossFM(nn.Module):
    def __init__(self):
        super().__init__()
        self.user_emb = nn.Embedding(USER_FIELDS * BUCKETS, DIM)
        self.item_emb = nn.Embedding(ITEM_FIELDS * BUCKETS, DIM)
        self.linear = nn.Linear(USER_FIELDS + ITEM_FIELDS, 1)
        self.cross_weight = nn.Linear(USER_FIELDS * ITEM_FIELDS, 1, bias=False)

    def forward(self, user_ids, item_ids):
        u = self.user_emb(user_ids + torch.arange(USER_FIELDS) * BUCKETS)
        v = self.item_emb(item_ids + torch.arange(ITEM_FIELDS) * BUCKETS)
        pairs = torch.cartesian_prod(torch.arange(USER_FIELDS), torch.arange(ITEM_FIELDS))
        crosses = (u[:, pairs[:, 0]] * v[:, pairs[:, 1]]).sum(-1)
        first = self.linear(torch.cat([user_ids, item_ids], dim=1).float() / BUCKETS)
        return (first + self.cross_weight(crosses)).squeeze(-1)


model = CrossFM()
step_model = torch.compile(model)
opt = torch.optim.Adam(model.parameters(), lr=1e-3)
for step in range(4):
    users = torch.randint(0, BUCKETS, (64, USER_FIELDS))
    items = torch.randint(0, BUCKETS, (64, ITEM_FIELDS))
    clicks = (torch.rand(64) > 0.8).float()
    loss = F.binary_cross_entropy_with_logits(step_model(users, items), clicks)
    loss.backward()
    opt.step()
    opt.zero_grad()
print(f"loss {loss.item():.4f}")
