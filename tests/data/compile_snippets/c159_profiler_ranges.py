"""A small ViT-style block instrumented with named profiler ranges around attention and
MLP so that traces show where time goes; compiled with the XLA backend when torch_xla is
present."""
import torch
import torch.nn as nn
from torch.autograd.profiler import record_function

try:
    import torch_xla  # noqa: F401
    BACKEND = "openxla"
except ImportError:
    BACKEND = "inductor"

torch.manual_seed(0)


class Block(nn.Module):
    def __init__(self, dim=32, heads=4):
        super().__init__()
        self.n1, self.n2 = nn.LayerNorm(dim), nn.LayerNorm(dim)
        self.qkv = nn.Linear(dim, 3 * dim)
        self.proj = nn.Linear(dim, dim)
        self.mlp = nn.Sequential(nn.Linear(dim, 4 * dim), nn.GELU(), nn.Linear(4 * dim, dim))
        self.heads = heads

    def forward(self, x):
        B, N, C = x.shape
        with record_function("attention"):
            q, k, v = self.qkv(self.n1(x)).reshape(B, N, 3, self.heads, C // self.heads).unbind(2)
            a = nn.functional.scaled_dot_product_attention(
                q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2))
            x = x + self.proj(a.transpose(1, 2).reshape(B, N, C))
        with record_function("mlp"):
            x = x + self.mlp(self.n2(x))
        return x


block = torch.compile(Block(), backend=BACKEND)
opt = torch.optim.SGD(block.parameters(), lr=0.01)
for _ in range(3):
    loss = block(torch.randn(2, 16, 32)).pow(2).mean()
    loss.backward()
    opt.step()
    opt.zero_grad()
print(loss.item())
