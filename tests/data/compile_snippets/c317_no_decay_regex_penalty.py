"""Fine-tuning a small transformer block with an explicit L2 penalty in the compiled loss:
parameters whose names match a no-decay regular expression (biases, norm weights,
embeddings) are left out of the penalty, as in many fine-tuning scripts."""
import re

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)

NO_DECAY = re.compile(r"(^|\.)(bias|norm\d*\.weight|embed\.weight)$")


class TinyEncoder(nn.Module):
    def __init__(self, vocab=50, dim=32):
        super().__init__()
        self.embed = nn.Embedding(vocab, dim)
        self.norm1 = nn.LayerNorm(dim)
        self.ff = nn.Sequential(nn.Linear(dim, 64), nn.GELU(), nn.Linear(64, dim))
        self.norm2 = nn.LayerNorm(dim)
        self.head = nn.Linear(dim, 2)

    def forward(self, ids):
        h = self.embed(ids)
        h = h + self.ff(self.norm1(h))
        return self.head(self.norm2(h).mean(1))


def decayed_l2(module):
    total = 0.0
    for name, p in module.named_parameters():
        if NO_DECAY.search(name) is None:
            total = total + p.pow(2).sum()
    return total


model = TinyEncoder()
opt = torch.optim.SGD(model.parameters(), lr=0.05)


@torch.compile
def loss_fn(ids, labels):
    return F.cross_entropy(model(ids), labels) + 1e-4 * decayed_l2(model)


for _ in range(5):
    ids = torch.randint(0, 50, (4, 12))
    labels = torch.randint(0, 2, (4,))
    loss = loss_fn(ids, labels)
    loss.backward()
    opt.step()
    opt.zero_grad()
print(loss)
