"""`torch_xla.compile` fine-tuning of a small ViT at several resolutions: the patch tokens come
from a patchified image, and the learned 8x8 position embedding is resized to the token grid,
whose side `forward` recovers from the number of tokens with `math.isqrt(n)`, by bicubic
interpolation (as timm's `resample_abs_pos_embed` callers do)."""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

try:
    import torch_xla
    compile_step = torch_xla.compile
except ImportError:  # CPU run without torch_xla
    compile_step = torch.compile

torch.manual_seed(0)
PATCH, DIM = 4, 32


class TinyViT(nn.Module):
    def __init__(self, grid=8, classes=10):
        super().__init__()
        self.proj = nn.Linear(3 * PATCH * PATCH, DIM)
        self.pos_embed = nn.Parameter(torch.randn(1, grid, grid, DIM) * 0.02)
        self.block = nn.TransformerEncoderLayer(DIM, 4, 64, batch_first=True)
        self.head = nn.Linear(DIM, classes)

    def forward(self, patches):
        tokens = self.proj(patches)
        side = math.isqrt(tokens.shape[1])
        pos = F.interpolate(self.pos_embed.permute(0, 3, 1, 2), size=(side, side),
                            mode="bicubic", align_corners=False)
        tokens = tokens + pos.permute(0, 2, 3, 1).reshape(1, side * side, DIM)
        return self.head(self.block(tokens).mean(1))


def patchify(images):
    b, c, h, w = images.shape
    x = images.reshape(b, c, h // PATCH, PATCH, w // PATCH, PATCH)
    return x.permute(0, 2, 4, 1, 3, 5).reshape(b, (h // PATCH) * (w // PATCH), c * PATCH * PATCH)


model = TinyViT()
opt = torch.optim.AdamW(model.parameters(), lr=1e-3)


def train_loss(patches, labels):
    return F.cross_entropy(model(patches), labels)


step = compile_step(train_loss)
for size in (32, 40, 48, 32, 56, 64):
    images = torch.randn(4, 3, size, size)
    loss = step(patchify(images), torch.randint(0, 10, (4,)))
    loss.backward()
    opt.step()
    opt.zero_grad()
print(f"loss {loss.item():.4f}")
