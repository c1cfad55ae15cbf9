"""Prompt-to-prompt style attention inspection: an attention store object is handed to every
cross-attention layer of a small denoiser, which records its attention probabilities during
sampling so the maps can be averaged afterwards."""
import torch
import torch.nn as nn

torch.manual_seed(0)


class AttentionStore:
    def __init__(self):
        self.step_store = {"down": [], "up": []}

    def record(self, place, probs):
        self.step_store[place].append(probs.detach().mean(dim=1))

    def average(self, place):
        return torch.stack(self.step_store[place]).mean(0)


class CrossAttention(nn.Module):
    def __init__(self, dim, ctx_dim, place, store):
        super().__init__()
        self.q = nn.Linear(dim, dim)
        self.kv = nn.Linear(ctx_dim, 2 * dim)
        self.place = place
        self.store = store

    def forward(self, x, ctx):
        k, v = self.kv(ctx).chunk(2, dim=-1)
        probs = (self.q(x) @ k.transpose(1, 2) / x.shape[-1] ** 0.5).softmax(-1)
        if self.store is not None:
            self.store.record(self.place, probs)
        return x + probs @ v


class TinyUNet(nn.Module):
    def __init__(self, store=None):
        super().__init__()
        self.down = CrossAttention(32, 24, "down", store)
        self.mid = nn.Linear(32, 32)
        self.up = CrossAttention(32, 24, "up", store)

    def forward(self, x, ctx):
        return self.up(self.mid(self.down(x, ctx)).relu(), ctx)


store = AttentionStore()
unet = torch.compile(TinyUNet(store).eval())
ctx = torch.randn(1, 7, 24)
with torch.no_grad():
    x = torch.randn(1, 16, 32)
    for t in range(10):
        x = x - 0.1 * unet(x, ctx)
print(store.average("down").shape, store.average("up").shape)
