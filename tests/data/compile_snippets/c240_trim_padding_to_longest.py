"""Gaudi text classification: the tokenizer pads every batch to the model's maximum length, and the
compiled model trims the padding columns itself, to the longest sequence of the batch according to
the attention mask, before running its encoder."""
import habana_frameworks.torch.core as htcore
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
MAX_LEN = 64


class TextClassifier(nn.Module):
    def __init__(self, vocab=500, dim=32, n_classes=4):
        super().__init__()
        self.embed = nn.Embedding(vocab, dim, padding_idx=0)
        self.encoder = nn.TransformerEncoderLayer(dim, 4, 64, batch_first=True, dropout=0.0)
        self.head = nn.Linear(dim, n_classes)

    def trim(self, input_ids, attention_mask):
        longest = attention_mask.sum(-1).max()
        return input_ids[:, :longest], attention_mask[:, :longest]

    def forward(self, input_ids, attention_mask):
        input_ids, attention_mask = self.trim(input_ids, attention_mask)
        h = self.encoder(self.embed(input_ids), src_key_padding_mask=attention_mask == 0)
        pooled = (h * attention_mask.unsqueeze(-1)).sum(1) / attention_mask.sum(1, keepdim=True)
        return self.head(pooled)


def pad_batch(lengths):
    ids = torch.zeros(len(lengths), MAX_LEN, dtype=torch.long)
    mask = torch.zeros(len(lengths), MAX_LEN, dtype=torch.long)
    for i, n in enumerate(lengths):
        ids[i, :n] = torch.randint(1, 500, (n,))
        mask[i, :n] = 1
    return ids, mask


model = TextClassifier()
cmodel = torch.compile(model, backend="hpu_backend")
opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
for lengths in ([12, 30, 7, 22], [40, 18, 9, 33], [15, 15, 28, 11], [50, 21, 36, 8]):
    ids, mask = pad_batch(lengths)
    loss = F.cross_entropy(cmodel(ids, mask), torch.randint(0, 4, (4,)))
    loss.backward()
    opt.step()
    opt.zero_grad()
    htcore.mark_step()
print(f"loss {loss.item():.4f}")
