"""Greedy decoding with a preallocated (static) KV cache on Gaudi.

One attention layer whose K/V buffers are allocated for the full length up front: the prompt is
copied in at once, then each new token is written at its `cache_position`, so every decode step
sees the same shapes. The decoder is compiled with the HPU backend.
"""
import torch
import torch.nn as nn
import habana_frameworks.torch.core as htcore

torch.manual_seed(0)
VOCAB, DIM, MAX_LEN = 100, 32, 24


class StaticKV:
    def __init__(self, batch, max_len, dim):
        self.k = torch.zeros(batch, max_len, dim)
        self.v = torch.zeros(batch, max_len, dim)

    def update(self, k, v, cache_position):
        if cache_position is None:
            self.k[:, : k.size(1)].copy_(k)
            self.v[:, : v.size(1)].copy_(v)
        else:
            self.k.index_copy_(1, cache_position, k)
            self.v.index_copy_(1, cache_position, v)
        return self.k, self.v


class TinyDecoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(VOCAB, DIM)
        self.qkv = nn.Linear(DIM, 3 * DIM)
        self.head = nn.Linear(DIM, VOCAB)

    def forward(self, ids, positions, cache, cache_position=None):
        q, k, v = self.qkv(self.emb(ids)).chunk(3, dim=-1)
        keys, values = cache.update(k, v, cache_position)
        allowed = torch.arange(MAX_LEN)[None, :] <= positions[:, None]
        scores = (q @ keys.transpose(1, 2)) / DIM ** 0.5
        scores = scores.masked_fill(~allowed, float("-inf"))
        return self.head(scores.softmax(-1) @ values)


step = torch.compile(TinyDecoder().eval(), backend="hpu_backend")


def generate(prompt, new_tokens=12):
    cache = StaticKV(prompt.size(0), MAX_LEN, DIM)
    n = prompt.size(1)
    logits = step(prompt, torch.arange(n), cache)
    tok = logits[:, -1].argmax(-1, keepdim=True)
    out = [tok]
    for pos in range(n, n + new_tokens - 1):
        where = torch.tensor([pos])
        logits = step(tok, where, cache, cache_position=where)
        tok = logits[:, -1].argmax(-1, keepdim=True)
        out.append(tok)
        htcore.mark_step()
    return torch.cat(out, dim=1)


with torch.no_grad():
    for _ in range(2):
        print(generate(torch.randint(0, VOCAB, (1, 8))))
