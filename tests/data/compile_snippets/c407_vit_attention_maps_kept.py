"""Vision transformer that keeps each block's attention map for attention-rollout plots.

Every block stores its (detached) attention probabilities on itself as `self.last_attn`, and
after the compiled forward the evaluation script multiplies the stored maps through the layers
to visualise which patches the class token attends to.
"""
import torch
import torch.nn as nn

torch.manual_seed(0)
DIM, HEADS = 32, 4


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.norm1, self.norm2 = nn.LayerNorm(DIM), nn.LayerNorm(DIM)
        self.qkv = nn.Linear(DIM, 3 * DIM)
        self.proj = nn.Linear(DIM, DIM)
        self.mlp = nn.Sequential(nn.Linear(DIM, 2 * DIM), nn.GELU(), nn.Linear(2 * DIM, DIM))
        self.last_attn = None

    def forward(self, x):
        b, t, _ = x.shape
        q, k, v = self.qkv(self.norm1(x)).view(b, t, 3, HEADS, -1).permute(2, 0, 3, 1, 4)
        attn = (q @ k.transpose(-2, -1) * (DIM // HEADS) ** -0.5).softmax(-1)
        self.last_attn = attn.detach()
        x = x + self.proj((attn @ v).transpose(1, 2).reshape(b, t, DIM))
        return x + self.mlp(self.norm2(x))


class TinyViT(nn.Module):
    def __init__(self, depth=3):
        super().__init__()
        self.patch = nn.Conv2d(3, DIM, 8, stride=8)
        self.cls = nn.Parameter(torch.zeros(1, 1, DIM))
        self.blocks = nn.ModuleList(Block() for _ in range(depth))

    def forward(self, images):
        x = self.patch(images).flatten(2).transpose(1, 2)
        x = torch.cat([self.cls.expand(x.shape[0], -1, -1), x], dim=1)
        for blk in self.blocks:
            x = blk(x)
        return x[:, 0]


def attention_rollout(blocks):
    rollout = None
    for blk in blocks:
        a = blk.last_attn.mean(1)
        a = a + torch.eye(a.shape[-1])
        a = a / a.sum(-1, keepdim=True)
        rollout = a if rollout is None else a @ rollout
    return rollout[:, 0, 1:]


model = TinyViT().eval()
compiled = torch.compile(model)
with torch.no_grad():
    for step in range(3):
        compiled(torch.randn(2, 3, 32, 32))
        heat = attention_rollout(model.blocks)
print(heat.shape)
