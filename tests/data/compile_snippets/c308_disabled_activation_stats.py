# A transformer-ish block that records activation statistics for a dashboard. The recording
# helper reads values back to Python, so it is excluded from compilation with
# torch.compiler.disable and called from the compiled forward after each sub-layer.
import torch
import torch.nn as nn

torch.manual_seed(0)

activation_stats = {}


@torch.compiler.disable
def record_stats(name, x):
    activation_stats[name] = (x.detach().mean().item(), x.detach().std().item())


class Block(nn.Module):
    def __init__(self, dim=32):
        super().__init__()
        self.norm1 = nn.LayerNorm(dim)
        self.attn = nn.MultiheadAttention(dim, 4, batch_first=True)
        self.norm2 = nn.LayerNorm(dim)
        self.mlp = nn.Sequential(nn.Linear(dim, 4 * dim), nn.GELU(), nn.Linear(4 * dim, dim))

    def forward(self, x):
        h = self.norm1(x)
        x = x + self.attn(h, h, h, need_weights=False)[0]
        record_stats("attn_out", x)
        x = x + self.mlp(self.norm2(x))
        record_stats("mlp_out", x)
        return x


block = Block()
compiled = torch.compile(block)
opt = torch.optim.AdamW(block.parameters(), lr=1e-3)
for step in range(3):
    loss = compiled(torch.randn(2, 10, 32)).pow(2).mean()
    loss.backward()
    opt.step()
    opt.zero_grad()
print(activation_stats)
