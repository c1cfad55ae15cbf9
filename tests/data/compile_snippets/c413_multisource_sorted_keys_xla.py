"""Click-through model trained with `torch_xla.compile` on batches from three data sources.

Each source has its own collator returning a dict of feature-id tensors (user, item and context
ids) in its own key order; a shared wrapper rebuilds every batch with its keys sorted before it
reaches the step. The model embeds every feature it is given, iterating over the batch dict, and
sums the embeddings. Batches from the three sources are interleaved round-robin.
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
WIDTHS = {"user": 2, "item": 3, "context": 4}


class ClickModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.tables = nn.ModuleDict({k: nn.Embedding(VOCAB, DIM) for k in WIDTHS})
        self.mlp = nn.Sequential(nn.Linear(DIM, DIM), nn.ReLU(), nn.Linear(DIM, 1))

    def forward(self, features):
        pooled = 0
        for name, ids in features.items():
            pooled = pooled + self.tables[name](ids).mean(1)
        return self.mlp(pooled).squeeze(-1)


def make_collator(key_order):
    def collate(b):
        return {k: torch.randint(0, VOCAB, (b, WIDTHS[k])) for k in key_order}
    return collate


def canonical(batch):
    return {k: batch[k] for k in sorted(batch)}


model = ClickModel()
opt = torch.optim.Adagrad(model.parameters(), lr=0.05)


def train_step(features, clicks):
    return F.binary_cross_entropy_with_logits(model(features), clicks)


step_fn = torch_xla.compile(train_step) if torch_xla else torch.compile(train_step)
sources = [make_collator(("user", "item", "context")), make_collator(("item", "user", "context")),
           make_collator(("context", "user", "item"))]
for step in range(6):
    loss = step_fn(canonical(sources[step % 3](16)), torch.randint(0, 2, (16,)).float())
    loss.backward()
    opt.step()
    opt.zero_grad()
print(round(loss.item(), 3))
