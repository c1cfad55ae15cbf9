"""`openxla` tabular model with a robust-scaling front end: inside the compiled model each
feature column is centred on its batch median and divided by its inter-quartile range, with the
three quantiles taken at once by `torch.quantile(x, self.q, dim=0)` from a buffer of levels."""
import torch
import torch.nn as nn
import torch.nn.functional as F

try:
    import torch_xla.core.xla_model as xm
    BACKEND, device = "openxla", xm.xla_device()
except ImportError:  # CPU run without torch_xla
    xm, BACKEND, device = None, "eager", torch.device("cpu")

torch.manual_seed(0)


class RobustScaler(nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("q", torch.tensor([0.25, 0.5, 0.75]))

    def forward(self, x):
        q1, med, q3 = torch.quantile(x, self.q, dim=0)
        return (x - med) / (q3 - q1 + 1e-6)


class TabularNet(nn.Module):
    def __init__(self, feats=14, classes=3):
        super().__init__()
        self.scale = RobustScaler()
        self.mlp = nn.Sequential(nn.Linear(feats, 64), nn.ReLU(), nn.Linear(64, classes))

    def forward(self, x):
        return self.mlp(self.scale(x))


model = TabularNet().to(device)
step_model = torch.compile(model, backend=BACKEND)
opt = torch.optim.Adam(model.parameters(), lr=1e-3)
for step in range(5):
    x = torch.randn(128, 14, device=device) * torch.logspace(0, 3, 14, device=device)
    y = torch.randint(0, 3, (128,), device=device)
    loss = F.cross_entropy(step_model(x), y)
    loss.backward()
    opt.step()
    opt.zero_grad()
    if xm is not None:
        xm.mark_step()
print(f"loss {loss.item():.4f}")
