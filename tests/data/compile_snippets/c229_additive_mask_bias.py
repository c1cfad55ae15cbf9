"""Encoder inference with padded batches: the attention mask is turned into an additive bias
that is zero on real tokens and very negative on padding, and handed to the attention kernel."""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
to_bias = lambda mask, dtype: (1.0 - mask[:, None, None, :].to(dtype)) * torch.finfo(dtype).min


class SelfAttention(nn.Module):
    def __init__(self, dim=32, heads=4):
        super().__init__()
        self.heads = heads
        self.qkv = nn.Linear(dim, 3 * dim)
        self.out = nn.Linear(dim, dim)

    def forward(self, x, attention_mask):
        b, n, d = x.shape
        q, k, v = self.qkv(x).view(b, n, 3, self.heads, d // self.heads).permute(2, 0, 3, 1, 4)
        y = F.scaled_dot_product_attention(q, k, v, attn_mask=to_bias(attention_mask, x.dtype))
        return self.out(y.transpose(1, 2).reshape(b, n, d))


attn = SelfAttention().eval()
cattn = torch.compile(attn)
with torch.no_grad():
    for step in range(4):
        mask = torch.ones(4, 16, dtype=torch.long)
        if step % 2:
            mask[:, 12:] = 0
        y = cattn(torch.randn(4, 16, 32), mask)
print("output", y.shape)
