"""DLRM-style click-through model on an openxla-compiled forward, with its sparse features in one
table-batched `nn.EmbeddingBag(mode="sum")` (each feature's ids shifted by its table offset, as
batched-embedding kernels do): the batch arrives as one flat tensor of ids with per-bag offsets
and per-id weights (a jagged batch, the number of ids differs from batch to batch), and the
pooled features meet the dense ones in a dot-product interaction."""
import torch
import torch.nn as nn

torch.manual_seed(0)
VOCABS = (50, 80)
TABLE_OFFSETS = (0, 50)


class TinyDLRM(nn.Module):
    def __init__(self, n_dense=4, dim=8):
        super().__init__()
        self.bottom = nn.Sequential(nn.Linear(n_dense, dim), nn.ReLU())
        self.tables = nn.EmbeddingBag(sum(VOCABS), dim, mode="sum")
        n = len(VOCABS) + 1
        self.top = nn.Sequential(nn.Linear(dim + n * (n - 1) // 2, 16), nn.ReLU(), nn.Linear(16, 1))

    def forward(self, dense, ids, offsets, weights):
        batch, dim = dense.shape[0], self.tables.embedding_dim
        pooled = self.tables(ids, offsets, per_sample_weights=weights)
        stacked = torch.cat([self.bottom(dense)[:, None], pooled.view(len(VOCABS), batch, dim).transpose(0, 1)], 1)
        inter = stacked @ stacked.transpose(1, 2)
        i, j = torch.triu_indices(stacked.shape[1], stacked.shape[1], offset=1)
        return self.top(torch.cat([stacked[:, 0], inter[:, i, j]], 1)).squeeze(-1)


def jagged_batch(batch):
    ids, lengths = [], []
    for vocab, shift in zip(VOCABS, TABLE_OFFSETS):
        lens = torch.randint(1, 5, (batch,))
        ids.append(torch.randint(0, vocab, (int(lens.sum()),)) + shift)
        lengths.append(lens)
    lengths = torch.cat(lengths)
    offsets = torch.cat([torch.zeros(1, dtype=torch.long), lengths.cumsum(0)[:-1]])
    ids = torch.cat(ids)
    return ids, offsets, torch.rand(ids.numel())


model = TinyDLRM()
compiled = torch.compile(model, backend="openxla")
opt = torch.optim.Adagrad(model.parameters(), lr=0.05)
for _ in range(4):
    dense = torch.randn(8, 4)
    logits = compiled(dense, *jagged_batch(8))
    loss = nn.functional.binary_cross_entropy_with_logits(logits, torch.randint(0, 2, (8,)).float())
    loss.backward()
    opt.step()
    opt.zero_grad()
print(loss.item())
