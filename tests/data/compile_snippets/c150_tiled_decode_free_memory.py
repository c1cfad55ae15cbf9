"""Latent decoding on Gaudi with tiling to bound memory: the compiled decoder processes the latent
in tiles and calls a small memory-release helper after each tile, the way large VAE decoders are
run on limited device memory."""
import gc

import torch
import torch.nn as nn

try:
    import habana_frameworks.torch.core as htcore
    BACKEND = "hpu_backend"
except ImportError:
    htcore, BACKEND = None, "inductor"

torch.manual_seed(0)


def release_memory(*tensors):
    for t in tensors:
        del t
    gc.collect()


class Decoder(nn.Module):
    def __init__(self, c=4):
        super().__init__()
        self.conv_in = nn.Conv2d(c, 16, 3, padding=1)
        self.up = nn.Sequential(nn.Upsample(scale_factor=2), nn.Conv2d(16, 16, 3, padding=1), nn.SiLU())
        self.conv_out = nn.Conv2d(16, 3, 3, padding=1)

    def forward(self, z, tile=8):
        rows = []
        for i in range(0, z.shape[-2], tile):
            row = []
            for j in range(0, z.shape[-1], tile):
                h = self.up(self.conv_in(z[..., i:i + tile, j:j + tile]))
                row.append(self.conv_out(h))
                release_memory(h)
            rows.append(torch.cat(row, dim=-1))
        return torch.cat(rows, dim=-2)


decoder = torch.compile(Decoder().eval(), backend=BACKEND)
with torch.no_grad():
    for _ in range(3):
        img = decoder(torch.randn(1, 4, 16, 16))
        if htcore is not None:
            htcore.mark_step()
print(img.shape)
