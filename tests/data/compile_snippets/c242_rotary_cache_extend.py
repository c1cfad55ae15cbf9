"""Llama-style inference server on XLA: the rotary embedding precomputes its cos/sin tables for a
default context and, like older Llama ports, rebuilds them longer whenever a prompt is longer than
the tables; prompts of many lengths arrive one after another."""
import torch
import torch.nn as nn
import torch_xla.core.xla_model as xm

torch.manual_seed(0)
device = xm.xla_device()


class RotaryEmbedding(nn.Module):
    def __init__(self, dim, max_position_embeddings=16, base=10000.0):
        super().__init__()
        inv_freq = 1.0 / (base ** (torch.arange(0, dim, 2).float() / dim))
        self.register_buffer("inv_freq", inv_freq, persistent=False)
        self._set_cos_sin_cache(max_position_embeddings)

    def _set_cos_sin_cache(self, seq_len):
        self.max_seq_len_cached = seq_len
        t = torch.arange(seq_len, dtype=self.inv_freq.dtype, device=self.inv_freq.device)
        freqs = torch.outer(t, self.inv_freq)
        emb = torch.cat((freqs, freqs), dim=-1)
        self.register_buffer("cos_cached", emb.cos(), persistent=False)
        self.register_buffer("sin_cached", emb.sin(), persistent=False)

    def forward(self, x, seq_len):
        if seq_len > self.max_seq_len_cached:
            self._set_cos_sin_cache(seq_len)
        return self.cos_cached[:seq_len], self.sin_cached[:seq_len]


def rotate_half(x):
    x1, x2 = x.chunk(2, dim=-1)
    return torch.cat((-x2, x1), dim=-1)


class Attention(nn.Module):
    def __init__(self, dim=32, heads=4):
        super().__init__()
        self.heads, self.head_dim = heads, dim // heads
        self.qkv = nn.Linear(dim, 3 * dim)
        self.out = nn.Linear(dim, dim)
        self.rotary = RotaryEmbedding(self.head_dim)

    def forward(self, x):
        b, n, _ = x.shape
        q, k, v = self.qkv(x).view(b, n, 3, self.heads, self.head_dim).permute(2, 0, 3, 1, 4)
        cos, sin = self.rotary(v, seq_len=n)
        q, k = q * cos + rotate_half(q) * sin, k * cos + rotate_half(k) * sin
        y = torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True)
        return self.out(y.transpose(1, 2).reshape(b, n, -1))


model = Attention().to(device).eval()
cmodel = torch.compile(model, backend="openxla")
with torch.no_grad():
    for n in (8, 12, 20, 24, 40, 33, 64, 10, 80):
        out = cmodel(torch.randn(1, n, 32, device=device))
        xm.mark_step()
print(out.shape, model.rotary.max_seq_len_cached)
