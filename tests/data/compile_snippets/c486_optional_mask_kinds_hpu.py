"""Gaudi (`hpu_backend`) sentence encoder behind three batchers: full-length batches come
without a mask (`attn_mask=None`), padded batches with a boolean key-padding mask, and
prefix-LM batches with an additive float bias; the attention block accepts any of the three."""
import torch
import torch.nn as nn
import torch.nn.functional as F

try:
    import habana_frameworks.torch.core as htcore
    BACKEND = "hpu_backend"
except ImportError:  # CPU run without the Gaudi stack
    htcore = None
    BACKEND = "eager"

torch.manual_seed(0)


class Attention(nn.Module):
    def __init__(self, dim=32):
        super().__init__()
        self.qkv = nn.Linear(dim, 3 * dim)
        self.out = nn.Linear(dim, dim)

    def forward(self, x, attn_mask=None):
        q, k, v = self.qkv(x).chunk(3, -1)
        scores = q @ k.transpose(-1, -2) / q.shape[-1] ** 0.5
        if attn_mask is not None:
            if attn_mask.dtype == torch.bool:
                scores = scores.masked_fill(~attn_mask[:, None, :], float("-inf"))
            else:
                scores = scores + attn_mask
        return self.out(scores.softmax(-1) @ v)


class Encoder(nn.Module):
    def __init__(self, vocab=100, dim=32):
        super().__init__()
        self.embed = nn.Embedding(vocab, dim)
        self.attn = Attention(dim)
        self.norm = nn.LayerNorm(dim)

    def forward(self, ids, attn_mask=None):
        h = self.embed(ids)
        h = self.norm(h + self.attn(h, attn_mask))
        return F.normalize(h.mean(1), dim=-1)


def full_batch():
    return torch.randint(0, 100, (4, 12)), None


def padded_batch():
    lengths = torch.tensor([12, 9, 7, 12])
    return torch.randint(0, 100, (4, 12)), torch.arange(12)[None, :] < lengths[:, None]


def prefix_lm_batch():
    bias = torch.triu(torch.full((12, 12), float("-inf")), 1)
    bias[:, :4] = 0.0
    return torch.randint(0, 100, (4, 12)), bias.expand(4, 12, 12)


model = Encoder().eval()
encode = torch.compile(model, backend=BACKEND)
with torch.no_grad():
    for make_batch in (full_batch, padded_batch, prefix_lm_batch) * 2:
        ids, mask = make_batch()
        emb = encode(ids, mask)
        if htcore is not None:
            htcore.mark_step()
        print(make_batch.__name__, f"{emb.norm(dim=-1).mean().item():.3f}")
