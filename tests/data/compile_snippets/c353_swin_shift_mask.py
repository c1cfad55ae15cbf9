"""Swin-style shifted-window attention block: forward builds the shifted-window attention mask
from Python slices (three height and three width regions numbered by a counter written into an
image-shaped tensor), rolls the feature map by half a window with `torch.roll`, partitions it into
windows and runs masked window attention; the block is compiled for training."""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


def window_partition(x, ws):
    b, h, w, c = x.shape
    x = x.view(b, h // ws, ws, w // ws, ws, c).permute(0, 1, 3, 2, 4, 5)
    return x.reshape(-1, ws * ws, c)


def window_reverse(windows, ws, b, h, w):
    x = windows.view(b, h // ws, w // ws, ws, ws, -1).permute(0, 1, 3, 2, 4, 5)
    return x.reshape(b, h, w, -1)


class ShiftedWindowBlock(nn.Module):
    def __init__(self, dim=16, window=4, heads=2):
        super().__init__()
        self.ws, self.shift, self.heads = window, window // 2, heads
        self.norm = nn.LayerNorm(dim)
        self.qkv = nn.Linear(dim, 3 * dim)
        self.proj = nn.Linear(dim, dim)

    def attention_mask(self, h, w):
        img = torch.zeros(1, h, w, 1)
        region = 0
        bands = (slice(0, -self.ws), slice(-self.ws, -self.shift), slice(-self.shift, None))
        for hs in bands:
            for wsl in bands:
                img[:, hs, wsl, :] = region
                region += 1
        ids = window_partition(img, self.ws).squeeze(-1)
        return (ids[:, None, :] - ids[:, :, None]) == 0

    def forward(self, x):
        b, h, w, c = x.shape
        shifted = torch.roll(self.norm(x), (-self.shift, -self.shift), (1, 2))
        windows = window_partition(shifted, self.ws)
        q, k, v = self.qkv(windows).view(windows.shape[0], -1, 3, self.heads, c // self.heads).permute(2, 0, 3, 1, 4)
        mask = self.attention_mask(h, w).repeat(b, 1, 1)[:, None]
        out = F.scaled_dot_product_attention(q, k, v, attn_mask=mask)
        out = self.proj(out.transpose(1, 2).reshape(windows.shape[0], -1, c))
        out = torch.roll(window_reverse(out, self.ws, b, h, w), (self.shift, self.shift), (1, 2))
        return x + out


block = ShiftedWindowBlock()
compiled = torch.compile(block)
opt = torch.optim.AdamW(block.parameters(), lr=1e-3)
for _ in range(3):
    out = compiled(torch.randn(2, 8, 8, 16))
    out.pow(2).mean().backward()
    opt.step()
    opt.zero_grad()
print(out.shape)
