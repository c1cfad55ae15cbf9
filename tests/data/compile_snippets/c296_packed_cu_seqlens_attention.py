# Pre-training on packed rows: the collator concatenates several documents into one token
# stream without padding and returns the cumulative sequence lengths, and the attention layer
# attends within each document by slicing the stream between consecutive cu_seqlens offsets.
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)

TOTAL_TOKENS = 48
DOCS_PER_ROW = 3


class PackedSelfAttention(nn.Module):
    def __init__(self, dim=32, n_heads=4):
        super().__init__()
        self.n_heads = n_heads
        self.qkv = nn.Linear(dim, 3 * dim)
        self.out = nn.Linear(dim, dim)

    def forward(self, x, cu_seqlens):
        q, k, v = self.qkv(x).chunk(3, dim=-1)
        outputs = []
        for i in range(cu_seqlens.numel() - 1):
            start, end = cu_seqlens[i], cu_seqlens[i + 1]
            qi, ki, vi = (t[start:end].unflatten(-1, (self.n_heads, -1)).transpose(0, 1) for t in (q, k, v))
            out = F.scaled_dot_product_attention(qi, ki, vi, is_causal=True)
            outputs.append(out.transpose(0, 1).flatten(1))
        return self.out(torch.cat(outputs))


class PackedLM(nn.Module):
    def __init__(self, vocab=100, dim=32):
        super().__init__()
        self.embed = nn.Embedding(vocab, dim)
        self.attn = PackedSelfAttention(dim)
        self.norm = nn.LayerNorm(dim)
        self.head = nn.Linear(dim, vocab)

    def forward(self, tokens, cu_seqlens):
        h = self.embed(tokens)
        h = h + self.attn(self.norm(h), cu_seqlens)
        return self.head(h)


def pack_batch():
    cuts = torch.randperm(TOTAL_TOKENS - 1)[: DOCS_PER_ROW - 1].add(1).sort().values
    cu_seqlens = torch.cat([torch.tensor([0]), cuts, torch.tensor([TOTAL_TOKENS])]).int()
    return torch.randint(0, 100, (TOTAL_TOKENS + 1,)), cu_seqlens


model = PackedLM()
compiled = torch.compile(model)
opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
for step in range(4):
    tokens, cu_seqlens = pack_batch()
    logits = compiled(tokens[:-1], cu_seqlens)
    loss = F.cross_entropy(logits, tokens[1:])
    loss.backward()
    opt.step()
    opt.zero_grad()
print(loss.item())
