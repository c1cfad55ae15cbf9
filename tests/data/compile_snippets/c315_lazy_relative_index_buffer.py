# Windowed attention with a learned relative-position bias table. The (window, window) index
# into the table is built lazily on the first forward from the window the block actually sees
# and registered as a non-persistent buffer, so checkpoints stay independent of it.
import torch
import torch.nn as nn

torch.manual_seed(0)


class WindowAttention(nn.Module):
    def __init__(self, dim=32, n_heads=4, max_window=16):
        super().__init__()
        self.n_heads = n_heads
        self.qkv = nn.Linear(dim, 3 * dim)
        self.proj = nn.Linear(dim, dim)
        self.bias_table = nn.Parameter(torch.zeros(2 * max_window - 1, n_heads))

    def forward(self, x):
        b, t, d = x.shape
        if not hasattr(self, "relative_index"):
            pos = torch.arange(t, device=x.device)
            rel = pos[:, None] - pos[None, :] + self.bias_table.shape[0] // 2
            self.register_buffer("relative_index", rel, persistent=False)
        q, k, v = self.qkv(x).view(b, t, 3, self.n_heads, -1).permute(2, 0, 3, 1, 4)
        bias = self.bias_table[self.relative_index].permute(2, 0, 1)
        attn = (q @ k.transpose(-2, -1) * q.shape[-1] ** -0.5 + bias).softmax(-1)
        return self.proj((attn @ v).transpose(1, 2).reshape(b, t, d))


layer = WindowAttention()
compiled = torch.compile(layer)
opt = torch.optim.Adam(layer.parameters(), lr=1e-3)
for step in range(5):
    loss = compiled(torch.randn(3, 16, 32)).pow(2).mean()
    loss.backward()
    opt.step()
    opt.zero_grad()
print(loss.item())
