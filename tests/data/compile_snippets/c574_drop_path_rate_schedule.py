"""Gaudi (`hpu_backend`) training of a small ViT-style encoder with timm's `drop_path` (stochastic
depth) in every block and a drop-path schedule: at the start of each epoch the trainer raises the
rate linearly towards its final value and sets each block's `DropPath.drop_prob`, deeper blocks
dropping more, on the model compiled once."""
import torch
import torch.nn as nn
import torch.nn.functional as F

try:
    import habana_frameworks.torch.core as htcore
    BACKEND = "hpu_backend"
except ImportError:  # CPU run without the Gaudi software stack
    htcore, BACKEND = None, "eager"

torch.manual_seed(0)
DEPTH, DIM, EPOCHS, FINAL_RATE = 4, 64, 5, 0.1


def drop_path(x, drop_prob: float = 0.0, training: bool = False, scale_by_keep: bool = True):
    if drop_prob == 0.0 or not training:
        return x
    keep_prob = 1 - drop_prob
    shape = (x.shape[0],) + (1,) * (x.ndim - 1)
    random_tensor = x.new_empty(shape).bernoulli_(keep_prob)
    if keep_prob > 0.0 and scale_by_keep:
        random_tensor.div_(keep_prob)
    return x * random_tensor


class DropPath(nn.Module):
    def __init__(self, drop_prob=0.0):
        super().__init__()
        self.drop_prob = drop_prob

    def forward(self, x):
        return drop_path(x, self.drop_prob, self.training)


class Block(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.norm = nn.LayerNorm(dim)
        self.mlp = nn.Sequential(nn.Linear(dim, 4 * dim), nn.GELU(), nn.Linear(4 * dim, dim))
        self.drop_path = DropPath()

    def forward(self, x):
        return x + self.drop_path(self.mlp(self.norm(x)))


class Encoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.patch = nn.Linear(48, DIM)
        self.blocks = nn.ModuleList([Block(DIM) for _ in range(DEPTH)])
        self.head = nn.Linear(DIM, 10)

    def forward(self, patches):
        x = self.patch(patches)
        for block in self.blocks:
            x = block(x)
        return self.head(x.mean(1))


def set_drop_path(model, rate):
    for i, block in enumerate(model.blocks):
        block.drop_path.drop_prob = rate * i / (len(model.blocks) - 1)


model = Encoder()
compiled_model = torch.compile(model, backend=BACKEND)
opt = torch.optim.AdamW(model.parameters(), lr=1e-3, weight_decay=0.05)
for epoch in range(EPOCHS):
    set_drop_path(model, FINAL_RATE * epoch / (EPOCHS - 1))
    for it in range(2):
        patches, labels = torch.randn(8, 16, 48), torch.randint(0, 10, (8,))
        loss = F.cross_entropy(compiled_model(patches), labels)
        loss.backward()
        opt.step()
        opt.zero_grad()
        if htcore is not None:
            htcore.mark_step()
print(f"loss {loss.item():.4f}")
