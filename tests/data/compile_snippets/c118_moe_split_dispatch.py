"""Train a two-layer sparse mixture-of-experts MLP with top-1 routing.

Tokens are sorted by expert, cut into one contiguous chunk per expert, run through that expert
and put back in order; the router gets the usual load-balancing loss.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class SparseMoE(nn.Module):
    def __init__(self, dim=32, n_experts=4, hidden=64):
        super().__init__()
        self.n_experts = n_experts
        self.router = nn.Linear(dim, n_experts, bias=False)
        self.experts = nn.ModuleList(
            nn.Sequential(nn.Linear(dim, hidden), nn.GELU(), nn.Linear(hidden, dim))
            for _ in range(n_experts))

    def _dispatch(self, x, expert_idx):
        order = expert_idx.argsort()
        tokens_per_expert = torch.bincount(expert_idx, minlength=self.n_experts)
        chunks = x[order].split(tokens_per_expert.tolist())
        out = torch.cat([expert(chunk) for expert, chunk in zip(self.experts, chunks)])
        return torch.empty_like(out).index_copy_(0, order, out), tokens_per_expert

    def forward(self, x):
        flat = x.reshape(-1, x.size(-1))
        probs = self.router(flat).softmax(-1)
        gate, expert_idx = probs.max(-1)
        y, counts = self._dispatch(flat, expert_idx)
        frac = counts.float() / flat.size(0)
        aux = self.n_experts * (frac * probs.mean(0)).sum()
        return (gate[:, None] * y).view_as(x), aux


class MoEModel(nn.Module):
    def __init__(self, dim=32, n_cls=5):
        super().__init__()
        self.layers = nn.ModuleList(SparseMoE(dim) for _ in range(2))
        self.head = nn.Linear(dim, n_cls)

    def forward(self, x):
        aux_total = 0.0
        for layer in self.layers:
            y, aux = layer(x)
            x = x + y
            aux_total = aux_total + aux
        return self.head(x.mean(1)), aux_total


model = MoEModel()
cmodel = torch.compile(model)
opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
for step in range(4):
    x, y = torch.randn(4, 12, 32), torch.randint(0, 5, (4,))
    logits, aux = cmodel(x)
    loss = F.cross_entropy(logits, y) + 0.01 * aux
    opt.zero_grad()
    loss.backward()
    opt.step()
print(loss.detach())
