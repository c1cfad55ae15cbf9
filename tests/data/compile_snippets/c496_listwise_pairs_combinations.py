"""Re-ranking with a pairwise hinge loss: every query comes with 12 retrieved passages, the
cross-encoder scores them, and the compiled loss enumerates the passage pairs of each list with
`torch.combinations(torch.arange(n), r=2)` and pushes the better-labelled passage above the other."""
import torch
import torch.nn as nn

torch.manual_seed(0)


class CrossEncoder(nn.Module):
    def __init__(self, feats=32, hidden=64):
        super().__init__()
        self.mlp = nn.Sequential(nn.Linear(feats, hidden), nn.GELU(), nn.Linear(hidden, 1))

    def forward(self, passages):
        return self.mlp(passages).squeeze(-1)


model = CrossEncoder()


@torch.compile
def pairwise_hinge(passages, labels, margin=1.0):
    scores = model(passages)
    n = scores.shape[1]
    pairs = torch.combinations(torch.arange(n), r=2)
    i, j = pairs[:, 0], pairs[:, 1]
    sign = torch.sign(labels[:, i] - labels[:, j])
    return torch.relu(margin - sign * (scores[:, i] - scores[:, j])).mean()


opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
for step in range(6):
    passages = torch.randn(8, 12, 32)
    labels = torch.randint(0, 3, (8, 12)).float()
    loss = pairwise_hinge(passages, labels)
    loss.backward()
    opt.step()
    opt.zero_grad()
print(f"loss {loss.item():.4f}")
