"""Text classification with a compiled encoder built with dynamic=False: the collator pads each batch
only to its own longest sequence (lengths known on the host) and marks the sequence dimension
dynamic before the batch goes to the model."""
import random

import torch
import torch.nn as nn
import torch.nn.functional as F

random.seed(0)
torch.manual_seed(0)


class TextClassifier(nn.Module):
    def __init__(self, vocab=500, dim=32, n_classes=4):
        super().__init__()
        self.embed = nn.Embedding(vocab, dim, padding_idx=0)
        self.proj = nn.Linear(dim, dim)
        self.head = nn.Linear(dim, n_classes)

    def forward(self, input_ids, attention_mask):
        h = torch.tanh(self.proj(self.embed(input_ids)))
        m = attention_mask.unsqueeze(-1).to(h.dtype)
        return self.head((h * m).sum(1) / m.sum(1))


def collate(sequences):
    longest = max(len(s) for s in sequences)
    ids = torch.zeros(len(sequences), longest, dtype=torch.long)
    mask = torch.zeros(len(sequences), longest, dtype=torch.long)
    for i, s in enumerate(sequences):
        ids[i, : len(s)] = torch.tensor(s)
        mask[i, : len(s)] = 1
    torch._dynamo.mark_dynamic(ids, 1)
    torch._dynamo.mark_dynamic(mask, 1)
    return ids, mask


model = TextClassifier()
cmodel = torch.compile(model, dynamic=False)
opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
for lengths in ([12, 30, 7, 22], [40, 18, 9, 33], [15, 15, 28, 11], [50, 21, 36, 8], [5, 9, 6, 3]):
    ids, mask = collate([[random.randrange(1, 500) for _ in range(n)] for n in lengths])
    loss = F.cross_entropy(cmodel(ids, mask), torch.randint(0, 4, (4,)))
    loss.backward()
    opt.step()
    opt.zero_grad()
print(f"loss {loss.item():.4f}")
