"""An attention block trained under bf16 autocast that keeps its score softmax in fp32 with the
older torch.cuda.amp.autocast(enabled=False) spelling, the way many diffusion and LLM codebases
upcast attention."""
import torch
import torch.nn as nn

torch.manual_seed(0)


class UpcastAttention(nn.Module):
    def __init__(self, dim=32, heads=4):
        super().__init__()
        self.heads = heads
        self.qkv = nn.Linear(dim, 3 * dim)
        self.out = nn.Linear(dim, dim)

    def forward(self, x):
        b, t, d = x.shape
        q, k, v = self.qkv(x).view(b, t, 3, self.heads, d // self.heads).unbind(2)
        q, k, v = (z.transpose(1, 2) for z in (q, k, v))
        scores = q @ k.transpose(-1, -2) / (d // self.heads) ** 0.5
        with torch.cuda.amp.autocast(enabled=False):
            probs = scores.float().softmax(-1)
        y = (probs.to(v.dtype) @ v).transpose(1, 2).reshape(b, t, d)
        return self.out(y)


block = UpcastAttention()
step = torch.compile(block)
opt = torch.optim.AdamW(block.parameters(), lr=1e-3)
for _ in range(4):
    with torch.autocast("cpu", dtype=torch.bfloat16):
        loss = step(torch.randn(2, 8, 32)).float().pow(2).mean()
    loss.backward()
    opt.step()
    opt.zero_grad()
print(float(loss))
