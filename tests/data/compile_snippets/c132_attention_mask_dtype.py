"""Greedy continuation with a small compiled self-attention encoder, fed attention masks
straight from the tokenizer output (0/1 integer tensors).
"""
import warnings

import torch
import torch.nn as nn

torch.manual_seed(0)


class SelfAttention(nn.Module):
    def __init__(self, dim=32):
        super().__init__()
        self.qkv = nn.Linear(dim, 3 * dim)
        self.proj = nn.Linear(dim, dim)
        self.scale = dim ** -0.5

    def forward(self, x, attention_mask):
        if attention_mask.dtype != torch.bool:
            warnings.warn("attention_mask should be a bool tensor; converting it", FutureWarning)
            attention_mask = attention_mask.bool()
        q, k, v = self.qkv(x).chunk(3, dim=-1)
        scores = (q @ k.transpose(1, 2)) * self.scale
        scores = scores.masked_fill(~attention_mask[:, None, :], torch.finfo(x.dtype).min)
        return x + self.proj(scores.softmax(-1) @ v)


class Encoder(nn.Module):
    def __init__(self, vocab=100, dim=32):
        super().__init__()
        self.emb = nn.Embedding(vocab, dim)
        self.attn = SelfAttention(dim)
        self.lm_head = nn.Linear(dim, vocab)

    def forward(self, input_ids, attention_mask):
        return self.lm_head(self.attn(self.emb(input_ids), attention_mask))


model = torch.compile(Encoder().eval())
batch = {"input_ids": torch.randint(0, 100, (2, 10)),
         "attention_mask": torch.ones(2, 10, dtype=torch.long)}
batch["attention_mask"][1, 7:] = 0
with torch.no_grad():
    for _ in range(4):
        next_ids = model(**batch)[:, -1].argmax(-1, keepdim=True)
        batch["input_ids"] = torch.cat([batch["input_ids"][:, 1:], next_ids], dim=1)
print(batch["input_ids"])
