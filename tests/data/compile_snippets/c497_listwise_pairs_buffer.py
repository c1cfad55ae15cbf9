"""Re-ranking with a pairwise hinge loss: every query comes with 12 retrieved passages, the
cross-encoder scores them, and the compiled loss pushes the better-labelled passage of each pair
above the other; the pair indices are made once with `torch.combinations` when the loss module is
built and kept as a buffer."""
import torch
import torch.nn as nn

torch.manual_seed(0)


class CrossEncoder(nn.Module):
    def __init__(self, feats=32, hidden=64):
        super().__init__()
        self.mlp = nn.Sequential(nn.Linear(feats, hidden), nn.GELU(), nn.Linear(hidden, 1))

    def forward(self, passages):
        return self.mlp(passages).squeeze(-1)


class PairwiseHinge(nn.Module):
    def __init__(self, list_size=12, margin=1.0):
        super().__init__()
        self.margin = margin
        self.register_buffer("pairs", torch.combinations(torch.arange(list_size), r=2))

    def forward(self, scores, labels):
        i, j = self.pairs[:, 0], self.pairs[:, 1]
        sign = torch.sign(labels[:, i] - labels[:, j])
        return torch.relu(self.margin - sign * (scores[:, i] - scores[:, j])).mean()


model = CrossEncoder()
criterion = PairwiseHinge()


@torch.compile
def pairwise_loss(passages, labels):
    return criterion(model(passages), labels)


opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
for step in range(6):
    passages = torch.randn(8, 12, 32)
    labels = torch.randint(0, 3, (8, 12)).float()
    loss = pairwise_loss(passages, labels)
    loss.backward()
    opt.step()
    opt.zero_grad()
print(f"loss {loss.item():.4f}")
