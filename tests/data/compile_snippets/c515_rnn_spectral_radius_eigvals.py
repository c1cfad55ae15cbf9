"""Gaudi (`hpu_backend`) recurrent regressor: the compiled loss unrolls a vanilla
recurrent cell over a fixed window and adds a stability penalty on the recurrent matrix's
spectral radius, the largest `abs()` of `torch.linalg.eigvals(W)`, above 0.95."""
import torch
import torch.nn as nn
import torch.nn.functional as F

try:
    import habana_frameworks.torch.core as htcore
    BACKEND = "hpu_backend"
except ImportError:  # CPU run without the Gaudi software stack
    htcore, BACKEND = None, "eager"

torch.manual_seed(0)


class RecurrentRegressor(nn.Module):
    def __init__(self, inp=6, hidden=32):
        super().__init__()
        self.inp = nn.Linear(inp, hidden)
        self.rec = nn.Linear(hidden, hidden, bias=False)
        self.out = nn.Linear(hidden, 1)

    def forward(self, seq):
        h = seq.new_zeros(seq.shape[0], self.rec.in_features)
        for t in range(seq.shape[1]):
            h = torch.tanh(self.inp(seq[:, t]) + self.rec(h))
        return self.out(h).squeeze(-1)


model = RecurrentRegressor()


@torch.compile(backend=BACKEND)
def loss_fn(seq, target, penalty=0.1):
    radius = torch.linalg.eigvals(model.rec.weight).abs().max()
    return F.mse_loss(model(seq), target) + penalty * F.relu(radius - 0.95) ** 2


opt = torch.optim.Adam(model.parameters(), lr=1e-3)
for step in range(5):
    seq = torch.randn(16, 20, 6)
    loss = loss_fn(seq, seq[:, -5:, 0].mean(-1))
    loss.backward()
    opt.step()
    opt.zero_grad()
    if htcore is not None:
        htcore.mark_step()
print(f"loss {loss.item():.4f}")
