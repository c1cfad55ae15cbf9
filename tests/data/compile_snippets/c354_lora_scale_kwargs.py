"""Multi-request image-model serving with a LoRA on the attention projections: like diffusers'
`cross_attention_kwargs={"scale": ...}`, each request passes its own LoRA strength in a kwargs
dict, and the compiled attention block reads it with `.get("scale", 1.0)` to weigh the low-rank
update; five requests with different strengths are served."""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class LoRALinear(nn.Module):
    def __init__(self, dim, rank=4):
        super().__init__()
        self.base = nn.Linear(dim, dim)
        self.down = nn.Linear(dim, rank, bias=False)
        self.up = nn.Linear(rank, dim, bias=False)
        nn.init.normal_(self.up.weight, std=0.02)

    def forward(self, x, scale):
        return self.base(x) + scale * self.up(self.down(x))


class CrossAttention(nn.Module):
    def __init__(self, dim=32, ctx_dim=24, heads=4):
        super().__init__()
        self.heads = heads
        self.to_q = LoRALinear(dim)
        self.to_k = nn.Linear(ctx_dim, dim)
        self.to_v = nn.Linear(ctx_dim, dim)
        self.to_out = LoRALinear(dim)

    def forward(self, hidden, context, cross_attention_kwargs=None):
        kwargs = cross_attention_kwargs or {}
        scale = kwargs.get("scale", 1.0)
        b, n, d = hidden.shape
        q = self.to_q(hidden, scale).view(b, n, self.heads, -1).transpose(1, 2)
        k = self.to_k(context).view(b, context.shape[1], self.heads, -1).transpose(1, 2)
        v = self.to_v(context).view(b, context.shape[1], self.heads, -1).transpose(1, 2)
        out = F.scaled_dot_product_attention(q, k, v).transpose(1, 2).reshape(b, n, d)
        return self.to_out(out, scale)


block = CrossAttention().eval()
compiled = torch.compile(block)
with torch.no_grad():
    for strength in (1.0, 0.8, 0.5, 0.3, 0.9):
        out = compiled(torch.randn(2, 16, 32), torch.randn(2, 7, 24), {"scale": strength})
print(out.shape)
