"""Blockwise-attention speech encoder evaluated through the `openxla` backend.

The encoder attends within fixed blocks of 8 frames, so a helper pads the frame axis up to a
multiple of the block size, skipping the pad when the utterance already fits, and trims the
output back afterwards. Validation utterances come with their natural (varying) frame counts.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

try:
    import torch_xla
except ImportError:  # no PyTorch/XLA here: run on the CPU with the default backend
    torch_xla = None

torch.manual_seed(0)
BLOCK, DIM = 8, 32


def pad_to_block(frames):
    n = frames.shape[1]
    if n % BLOCK:
        frames = F.pad(frames, (0, 0, 0, BLOCK - n % BLOCK))
    return frames, n


class BlockEncoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.inp = nn.Linear(40, DIM)
        self.qkv = nn.Linear(DIM, 3 * DIM)
        self.out = nn.Linear(DIM, DIM)

    def forward(self, feats):
        x, n = pad_to_block(self.inp(feats))
        b, t, d = x.shape
        q, k, v = self.qkv(x).view(b, t // BLOCK, BLOCK, 3 * d).chunk(3, dim=-1)
        attn = F.scaled_dot_product_attention(q, k, v)
        return self.out(attn.reshape(b, t, d))[:, :n]


model = BlockEncoder().eval()
compiled = torch.compile(model, backend="openxla" if torch_xla else "eager")

with torch.no_grad():
    for frames in [96, 83, 120, 101, 77, 64, 136, 90]:
        out = compiled(torch.randn(2, frames, 40))
print(out.shape)
