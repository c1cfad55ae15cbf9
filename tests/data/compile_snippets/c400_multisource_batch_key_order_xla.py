"""Click-through model trained with `torch_xla.compile` on batches from three data sources.

Each source has its own collator that returns a dict of feature-id tensors (user, item and
context ids); the collators were written by different teams and emit the same keys in different
orders. The model embeds every feature it is given and sums the embeddings, iterating over the
batch dict. Batches from the three sources are interleaved round-robin.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

try:
    import torch_xla
except ImportError:  # no PyTorch/XLA here: the same step runs on the CPU
    torch_xla = None

torch.manual_seed(0)
DIM, VOCAB = 16, 1000


class ClickModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.tables = nn.ModuleDict({k: nn.Embedding(VOCAB, DIM) for k in ("user", "item", "context")})
        self.mlp = nn.Sequential(nn.Linear(DIM, DIM), nn.ReLU(), nn.Linear(DIM, 1))

    def forward(self, features):
        pooled = 0
        for name, ids in features.items():
            pooled = pooled + self.tables[name](ids).mean(1)
        return self.mlp(pooled).squeeze(-1)


def collate_search(b):
    return {"user": torch.randint(0, VOCAB, (b, 2)), "item": torch.randint(0, VOCAB, (b, 3)),
            "context": torch.randint(0, VOCAB, (b, 4))}


def collate_feed(b):
    return {"item": torch.randint(0, VOCAB, (b, 3)), "user": torch.randint(0, VOCAB, (b, 2)),
            "context": torch.randint(0, VOCAB, (b, 4))}


def collate_ads(b):
    return {"context": torch.randint(0, VOCAB, (b, 4)), "user": torch.randint(0, VOCAB, (b, 2)),
            "item": torch.randint(0, VOCAB, (b, 3))}


model = ClickModel()
opt = torch.optim.Adagrad(model.parameters(), lr=0.05)


def train_step(features, clicks):
    return F.binary_cross_entropy_with_logits(model(features), clicks)


step_fn = torch_xla.compile(train_step) if torch_xla else torch.compile(train_step)
sources = [collate_search, collate_feed, collate_ads]
for step in range(6):
    loss = step_fn(sources[step % 3](16), torch.randint(0, 2, (16,)).float())
    loss.backward()
    opt.step()
    opt.zero_grad()
print(round(loss.item(), 3))
