"""Gaudi (`hpu_backend`) long-document encoder whose feed-forward layer is applied in chunks along
the sequence to bound peak activation memory; the number of chunks follows the host's thread
pool, `torch.get_num_threads()`, read in `forward` so that each worker thread gets one chunk."""
import torch
import torch.nn as nn
import torch.nn.functional as F

try:
    import habana_frameworks.torch.core as htcore
    BACKEND = "hpu_backend"
except ImportError:  # CPU run without the Gaudi software stack
    htcore, BACKEND = None, "eager"

torch.manual_seed(0)


class ChunkedFeedForward(nn.Module):
    def __init__(self, dim=64, hidden=256):
        super().__init__()
        self.up = nn.Linear(dim, hidden)
        self.down = nn.Linear(hidden, dim)

    def forward(self, x):
        num_chunks = max(1, torch.get_num_threads())
        outs = [self.down(F.gelu(self.up(c))) for c in x.chunk(num_chunks, dim=1)]
        return torch.cat(outs, dim=1)


class Encoder(nn.Module):
    def __init__(self, dim=64, layers=2):
        super().__init__()
        self.norms = nn.ModuleList(nn.LayerNorm(dim) for _ in range(layers))
        self.ffns = nn.ModuleList(ChunkedFeedForward(dim) for _ in range(layers))
        self.head = nn.Linear(dim, 4)

    def forward(self, x):
        for norm, ffn in zip(self.norms, self.ffns):
            x = x + ffn(norm(x))
        return self.head(x.mean(dim=1))


model = Encoder()
step_model = torch.compile(model, backend=BACKEND)
opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
for step in range(4):
    docs = torch.randn(4, 128, 64)
    labels = torch.randint(0, 4, (4,))
    loss = F.cross_entropy(step_model(docs), labels)
    loss.backward()
    opt.step()
    opt.zero_grad()
    if htcore is not None:
        htcore.mark_step()
print(f"loss {loss.item():.4f}")
