"""BERT-style pretraining on Gaudi: the MLM head runs only on the masked positions, gathered
with nonzero_static up to a fixed prediction budget per batch (padded slots are ignored)."""
import torch
import torch.nn as nn
import torch.nn.functional as F
import habana_frameworks.torch.core as htcore

torch.manual_seed(0)
VOCAB, DIM, SEQ, MAX_PRED = 1000, 64, 32, 40
IGNORE = -100


class TinyEncoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(VOCAB, DIM)
        self.layer = nn.TransformerEncoderLayer(DIM, 4, 128, dropout=0.0, batch_first=True)

    def forward(self, ids):
        return self.layer(self.embed(ids))


class MLMHead(nn.Module):
    def __init__(self):
        super().__init__()
        self.transform = nn.Sequential(nn.Linear(DIM, DIM), nn.GELU(), nn.LayerNorm(DIM))
        self.decoder = nn.Linear(DIM, VOCAB)

    def forward(self, hidden, labels):
        flat_labels = labels.flatten()
        pos = (flat_labels != IGNORE).nonzero_static(size=MAX_PRED, fill_value=-1).squeeze(-1)
        valid = pos >= 0
        pos = pos.clamp(min=0)
        picked = hidden.flatten(0, 1).index_select(0, pos)
        targets = flat_labels.index_select(0, pos).masked_fill(~valid, IGNORE)
        return F.cross_entropy(self.decoder(self.transform(picked)), targets, ignore_index=IGNORE)


def mask_tokens(ids, p=0.15):
    chosen = torch.rand(ids.shape) < p
    labels = ids.masked_fill(~chosen, IGNORE)
    return ids.masked_fill(chosen, 1), labels


encoder, head = TinyEncoder(), MLMHead()


def mlm_loss(ids, labels):
    return head(encoder(ids), labels)


step = torch.compile(mlm_loss, backend="hpu_backend")
opt = torch.optim.AdamW(list(encoder.parameters()) + list(head.parameters()), lr=1e-3)
for _ in range(4):
    ids, labels = mask_tokens(torch.randint(2, VOCAB, (8, SEQ)))
    loss = step(ids, labels)
    loss.backward()
    htcore.mark_step()
    opt.step()
    opt.zero_grad()
    htcore.mark_step()
print(f"mlm loss {loss.item():.3f}")
