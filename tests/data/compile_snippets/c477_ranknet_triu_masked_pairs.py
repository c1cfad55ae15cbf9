"""Learning-to-rank with a RankNet pairwise loss: each query comes with its own list of candidate
documents (a different number per query), the scorer rates them, and the compiled loss builds the
full matrix of score differences and averages it over the upper triangle, kept with
`torch.ones(n, n).triu(1)` as a weight mask."""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class Scorer(nn.Module):
    def __init__(self, feats=24, hidden=32):
        super().__init__()
        self.mlp = nn.Sequential(nn.Linear(feats, hidden), nn.ReLU(), nn.Linear(hidden, 1))

    def forward(self, docs):
        return self.mlp(docs).squeeze(-1)


scorer = Scorer()


def ranknet_loss(docs, relevance):
    scores = scorer(docs)
    n = scores.shape[0]
    upper = torch.ones(n, n).triu(1)
    target = (torch.sign(relevance[:, None] - relevance[None, :]) + 1) / 2
    pair_loss = F.binary_cross_entropy_with_logits(scores[:, None] - scores[None, :], target,
                                                   reduction="none")
    return (pair_loss * upper).sum() / upper.sum()


loss_fn = torch.compile(ranknet_loss)
opt = torch.optim.Adam(scorer.parameters(), lr=1e-3)
for n_docs in (10, 10, 7, 12, 15, 9, 20, 11):
    docs = torch.randn(n_docs, 24)
    relevance = torch.randint(0, 4, (n_docs,)).float()
    loss = loss_fn(docs, relevance)
    loss.backward()
    opt.step()
    opt.zero_grad()
print(f"loss {loss.item():.4f}")
