"""Sentence encoder that skips masking when a batch has no padding, through a mask object.

The data pipeline wraps the padding mask in a small `PaddingMask` class. Its `__bool__` says
whether any position is padded, so model code can write `if mask:` and skip the masked fill for
batches of equal-length sentences.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
DIM = 32


class PaddingMask:
    def __init__(self, lengths, max_len):
        self.padded = torch.arange(max_len)[None, :] >= lengths[:, None]

    def __bool__(self):
        return bool(self.padded.any())


class MeanPoolEncoder(nn.Module):
    def __init__(self, vocab=300):
        super().__init__()
        self.embed = nn.Embedding(vocab, DIM)
        self.proj = nn.Sequential(nn.Linear(DIM, DIM), nn.GELU(), nn.Linear(DIM, DIM))

    def forward(self, ids, mask):
        x = self.proj(self.embed(ids))
        if mask:
            x = x.masked_fill(mask.padded[..., None], 0.0)
            return x.sum(1) / (~mask.padded).sum(1, keepdim=True)
        return x.mean(1)


model = MeanPoolEncoder()
compiled = torch.compile(model)
opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
for step in range(4):
    lengths = torch.randint(5, 11, (4,))
    emb = compiled(torch.randint(0, 300, (4, 10)), PaddingMask(lengths, 10))
    loss = F.mse_loss(emb, torch.randn(4, DIM))
    loss.backward()
    opt.step()
    opt.zero_grad()
print(round(loss.item(), 3))
