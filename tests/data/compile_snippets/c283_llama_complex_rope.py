# Attention with rotary position embeddings written the way the original Llama reference code
# does it: precomputed complex frequencies from torch.polar, queries and keys viewed as complex
# numbers, multiplied, and viewed back as real pairs. The layer runs under torch_xla.compile.
import torch
import torch.nn as nn
import torch.nn.functional as F
import torch_xla

torch.manual_seed(0)


def precompute_freqs_cis(head_dim, max_len, theta=10000.0):
    freqs = 1.0 / (theta ** (torch.arange(0, head_dim, 2).float() / head_dim))
    angles = torch.outer(torch.arange(max_len).float(), freqs)
    return torch.polar(torch.ones_like(angles), angles)


def apply_rotary_emb(xq, xk, freqs_cis):
    xq_ = torch.view_as_complex(xq.float().reshape(*xq.shape[:-1], -1, 2))
    xk_ = torch.view_as_complex(xk.float().reshape(*xk.shape[:-1], -1, 2))
    freqs_cis = freqs_cis[None, :, None, :]
    xq_out = torch.view_as_real(xq_ * freqs_cis).flatten(3)
    xk_out = torch.view_as_real(xk_ * freqs_cis).flatten(3)
    return xq_out.type_as(xq), xk_out.type_as(xk)


class Attention(nn.Module):
    def __init__(self, dim=64, n_heads=4, max_len=128):
        super().__init__()
        self.n_heads, self.head_dim = n_heads, dim // n_heads
        self.wq, self.wk, self.wv = (nn.Linear(dim, dim, bias=False) for _ in range(3))
        self.wo = nn.Linear(dim, dim, bias=False)
        self.register_buffer("freqs_cis", precompute_freqs_cis(self.head_dim, max_len), persistent=False)

    def forward(self, x):
        b, t, _ = x.shape
        q = self.wq(x).view(b, t, self.n_heads, self.head_dim)
        k = self.wk(x).view(b, t, self.n_heads, self.head_dim)
        v = self.wv(x).view(b, t, self.n_heads, self.head_dim)
        q, k = apply_rotary_emb(q, k, self.freqs_cis[:t])
        out = F.scaled_dot_product_attention(q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2), is_causal=True)
        return self.wo(out.transpose(1, 2).reshape(b, t, -1))


device = torch_xla.device()
attn = Attention().to(device)
opt = torch.optim.AdamW(attn.parameters(), lr=1e-3)


def forward_loss(x, target):
    return F.mse_loss(attn(x), target)


loss_fn = torch_xla.compile(forward_loss)
for step in range(4):
    x = torch.randn(2, 32, 64, device=device)
    loss = loss_fn(x, torch.randn(2, 32, 64, device=device))
    loss.backward()
    opt.step()
    opt.zero_grad()
print(loss.item())
