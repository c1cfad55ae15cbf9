"""Gaudi (`hpu_backend`) heteroscedastic regression for sensor calibration: the network predicts a
mean and a log-variance per reading, and the compiled loss is `F.gaussian_nll_loss` of the
targets under that mean and variance."""
import torch
import torch.nn as nn
import torch.nn.functional as F

try:
    import habana_frameworks.torch.core as htcore
    BACKEND = "hpu_backend"
except ImportError:  # CPU run without the Gaudi software stack
    htcore, BACKEND = None, "eager"

torch.manual_seed(0)


class MeanVarianceNet(nn.Module):
    def __init__(self, feats=12, hidden=64):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(feats, hidden), nn.SiLU(), nn.Linear(hidden, hidden),
                                  nn.SiLU())
        self.mean = nn.Linear(hidden, 1)
        self.log_var = nn.Linear(hidden, 1)

    def forward(self, x):
        h = self.body(x)
        return self.mean(h).squeeze(-1), self.log_var(h).squeeze(-1)


model = MeanVarianceNet()


@torch.compile(backend=BACKEND)
def nll_loss(readings, targets):
    mean, log_var = model(readings)
    return F.gaussian_nll_loss(mean, targets, log_var.exp())


opt = torch.optim.Adam(model.parameters(), lr=1e-3)
for step in range(5):
    readings = torch.randn(64, 12)
    targets = readings[:, :3].sum(-1) + 0.1 * torch.randn(64)
    loss = nll_loss(readings, targets)
    loss.backward()
    opt.step()
    opt.zero_grad()
    if htcore is not None:
        htcore.mark_step()
print(f"nll {loss.item():.4f}")
