"""A timm-style vision block written to also be scriptable and exportable: its forward
checks torch.jit.is_scripting(), torch.jit.is_tracing() and torch.onnx.is_in_onnx_export()
to choose between a fused attention path and an explicit one."""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


def use_fused_attn():
    if torch.jit.is_scripting() or torch.jit.is_tracing():
        return False
    if torch.onnx.is_in_onnx_export():
        return False
    return True


class Attention(nn.Module):
    def __init__(self, dim=32, heads=4):
        super().__init__()
        self.heads = heads
        self.qkv = nn.Linear(dim, 3 * dim)
        self.proj = nn.Linear(dim, dim)

    def forward(self, x):
        b, n, c = x.shape
        q, k, v = self.qkv(x).reshape(b, n, 3, self.heads, c // self.heads).permute(2, 0, 3, 1, 4)
        if use_fused_attn():
            out = F.scaled_dot_product_attention(q, k, v)
        else:
            attn = (q @ k.transpose(-2, -1)) * (c // self.heads) ** -0.5
            out = attn.softmax(-1) @ v
        return self.proj(out.transpose(1, 2).reshape(b, n, c))


model = nn.Sequential(Attention(), nn.LayerNorm(32), Attention())
compiled = torch.compile(model)
opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
for _ in range(4):
    loss = compiled(torch.randn(2, 16, 32)).pow(2).mean()
    loss.backward()
    opt.step()
    opt.zero_grad()
print(loss)
