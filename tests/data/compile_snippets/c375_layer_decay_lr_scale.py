"""Layer-wise learning-rate decay with a hand-written update: a helper tags each block's
parameters with an lr_scale attribute, and a compiled function applies the scaled step."""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class Block(nn.Module):
    def __init__(self, dim=32):
        super().__init__()
        self.norm = nn.LayerNorm(dim)
        self.fc = nn.Linear(dim, dim)

    def forward(self, x):
        return x + F.gelu(self.fc(self.norm(x)))


def tag_layer_decay(blocks, decay=0.75):
    for depth, block in enumerate(blocks):
        for p in block.parameters():
            p.lr_scale = decay ** (len(blocks) - depth)


@torch.compile
def scaled_sgd_(params, lr, weight_decay):
    for p in params:
        step = lr * p.lr_scale
        p.mul_(1 - step * weight_decay).add_(p.grad, alpha=-step)


blocks = nn.ModuleList(Block() for _ in range(4))
head = nn.Linear(32, 3)
tag_layer_decay(blocks)
for it in range(3):
    x, y = torch.randn(16, 32), torch.randint(0, 3, (16,))
    h = x
    for b in blocks:
        h = b(h)
    F.cross_entropy(head(h), y).backward()
    with torch.no_grad():
        for b in blocks:
            scaled_sgd_(list(b.parameters()), 0.05, 1e-4)
        head.weight.add_(head.weight.grad, alpha=-0.05)
        head.bias.add_(head.bias.grad, alpha=-0.05)
    for p in list(blocks.parameters()) + list(head.parameters()):
        p.grad = None
print("done")
