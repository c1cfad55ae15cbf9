# A Gaudi-ported attention block keeps one code path for every device: on HPU it uses the
# fused scaled-dot-product attention as is, elsewhere it pins the math kernel with
# torch.nn.attention.sdpa_kernel so CPU results match the reference implementation.
import habana_frameworks.torch.core as htcore
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel

torch.manual_seed(0)
device = torch.device("cpu")  # "hpu" on Gaudi


class Attention(nn.Module):
    def __init__(self, dim=32, n_heads=4):
        super().__init__()
        self.n_heads = n_heads
        self.qkv = nn.Linear(dim, 3 * dim)
        self.proj = nn.Linear(dim, dim)

    def forward(self, x):
        b, t, d = x.shape
        q, k, v = self.qkv(x).view(b, t, 3, self.n_heads, -1).permute(2, 0, 3, 1, 4)
        if str(x.device).startswith("hpu"):
            out = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        else:
            with sdpa_kernel(SDPBackend.MATH):
                out = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        return self.proj(out.transpose(1, 2).reshape(b, t, d))


model = nn.Sequential(Attention(), nn.LayerNorm(32), Attention()).to(device)
compiled = torch.compile(model, backend="hpu_backend")
opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
for step in range(4):
    loss = compiled(torch.randn(2, 12, 32, device=device)).pow(2).mean()
    loss.backward()
    htcore.mark_step()
    opt.step()
    opt.zero_grad()
    htcore.mark_step()
print(loss.item())
