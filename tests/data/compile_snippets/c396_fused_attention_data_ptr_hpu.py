"""Encoder-decoder translation model on Gaudi whose attention layer fuses its projections.

One attention class serves both the decoder's self-attention and its cross-attention. When the
keys come from the same tensor as the queries it runs a single fused QKV matmul; otherwise it
projects the queries and the encoder memory with the two slices of the same weight. Like some
fused-kernel wrappers, it tells the two cases apart by comparing the inputs' storage addresses.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

try:
    import habana_frameworks.torch.core as htcore  # Gaudi software stack: registers "hpu_backend"
except ImportError:  # CPU-only machine: same code, no step markers
    htcore = None

torch.manual_seed(0)
DIM, HEADS = 32, 4


class FusedAttention(nn.Module):
    def __init__(self):
        super().__init__()
        self.qkv = nn.Linear(DIM, 3 * DIM)
        self.out = nn.Linear(DIM, DIM)

    def forward(self, x, memory):
        if memory.data_ptr() == x.data_ptr():
            q, k, v = self.qkv(x).chunk(3, dim=-1)
        else:
            w_q, w_kv = self.qkv.weight.split([DIM, 2 * DIM])
            b_q, b_kv = self.qkv.bias.split([DIM, 2 * DIM])
            q = F.linear(x, w_q, b_q)
            k, v = F.linear(memory, w_kv, b_kv).chunk(2, dim=-1)
        b, t, _ = q.shape
        q, k, v = (z.unflatten(-1, (HEADS, -1)).transpose(1, 2) for z in (q, k, v))
        attn = F.scaled_dot_product_attention(q, k, v)
        return self.out(attn.transpose(1, 2).reshape(b, t, DIM))


class DecoderLayer(nn.Module):
    def __init__(self):
        super().__init__()
        self.self_attn = FusedAttention()
        self.cross_attn = FusedAttention()
        self.ff = nn.Sequential(nn.Linear(DIM, 4 * DIM), nn.GELU(), nn.Linear(4 * DIM, DIM))
        self.norms = nn.ModuleList(nn.LayerNorm(DIM) for _ in range(3))

    def forward(self, y, memory):
        h = self.norms[0](y)
        y = y + self.self_attn(h, h)
        y = y + self.cross_attn(self.norms[1](y), memory)
        return y + self.ff(self.norms[2](y))


layer = DecoderLayer()
compiled = torch.compile(layer, backend="hpu_backend" if htcore else "eager")
opt = torch.optim.AdamW(layer.parameters(), lr=1e-3)
for step in range(4):
    memory = torch.randn(4, 10, DIM)
    target = torch.randn(4, 7, DIM)
    loss = F.mse_loss(compiled(torch.randn(4, 7, DIM), memory), target)
    loss.backward()
    opt.step()
    opt.zero_grad()
    if htcore:
        htcore.mark_step()
print(round(loss.item(), 3))
