"""Multimodal pre-training: each loader tags its batch tensor with the modality it came from
(`batch.modality = "image"`), and the shared encoder picks the modality's input norm and scale
from that tag."""
import torch
import torch.nn as nn

torch.manual_seed(0)


class SharedEncoder(nn.Module):
    def __init__(self, dim=32):
        super().__init__()
        self.norms = nn.ModuleDict({m: nn.LayerNorm(dim) for m in ("image", "audio", "text")})
        self.body = nn.Sequential(nn.Linear(dim, 64), nn.GELU(), nn.Linear(64, dim))

    def forward(self, tokens):
        scale = 0.5 if tokens.modality == "audio" else 1.0
        h = self.norms[tokens.modality](tokens) * scale
        return self.body(h).mean(1)


def load(modality):
    batch = torch.randn(4, 10, 32)
    batch.modality = modality
    return batch


encoder = SharedEncoder()
cencoder = torch.compile(encoder)
opt = torch.optim.Adam(encoder.parameters(), lr=1e-3)
for step in range(9):
    batch = load(("image", "audio", "text")[step % 3])
    loss = cencoder(batch).pow(2).mean()
    loss.backward()
    opt.step()
    opt.zero_grad()
print(f"loss {loss.item():.4f}")
