"""Sequence packing for a document-level retriever, trained with `torch_xla.compile`.

Several short documents are packed into one fixed-length row of token states; the collator also
returns where each document starts. The encoder's pooling helper cuts the packed row back into
documents at those offsets and mean-pools each one, and the step trains the pooled embeddings
with an in-batch contrastive loss against the paired queries.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

try:
    import torch_xla
except ImportError:  # no PyTorch/XLA here: the same step runs on the CPU
    torch_xla = None

torch.manual_seed(0)
PACK_LEN, DOCS_PER_ROW, DIM = 64, 4, 32


def pool_documents(states, starts):
    docs = torch.tensor_split(states, starts[1:])
    return torch.stack([d.mean(0) for d in docs])


class PackedEncoder(nn.Module):
    def __init__(self, vocab=1000):
        super().__init__()
        self.embed = nn.Embedding(vocab, DIM)
        self.mix = nn.Sequential(nn.Linear(DIM, DIM), nn.GELU(), nn.Linear(DIM, DIM))

    def forward(self, packed_ids, starts):
        states = self.mix(self.embed(packed_ids))
        return pool_documents(states, starts)


encoder = PackedEncoder()
query_tower = nn.Linear(DIM, DIM)
opt = torch.optim.AdamW(list(encoder.parameters()) + list(query_tower.parameters()), lr=1e-3)


def train_step(packed_ids, starts, queries):
    docs = F.normalize(encoder(packed_ids, starts), dim=-1)
    q = F.normalize(query_tower(queries), dim=-1)
    return F.cross_entropy(q @ docs.T / 0.05, torch.arange(q.shape[0]))


step_fn = torch_xla.compile(train_step) if torch_xla else torch.compile(train_step)

for step in range(4):
    cuts = torch.randperm(PACK_LEN - 1)[: DOCS_PER_ROW - 1].add(1).sort().values
    starts = torch.cat([torch.zeros(1, dtype=torch.long), cuts])
    loss = step_fn(torch.randint(0, 1000, (PACK_LEN,)), starts, torch.randn(DOCS_PER_ROW, DIM))
    loss.backward()
    opt.step()
    opt.zero_grad()
print(round(loss.item(), 3))
