"""Mixed-precision regression training: the whole optimisation step (autocast forward,
loss scaling, optimizer step, scaler update) lives in one compiled train_step function,
with the Gaudi graph backend when it is installed."""
import torch
import torch.nn as nn

try:
    import habana_frameworks.torch.core  # noqa: F401
    BACKEND = "hpu_backend"
except ImportError:
    BACKEND = "inductor"
DEVICE = "cpu"

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(16, 32), nn.SiLU(), nn.Linear(32, 1)).to(DEVICE)
opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
scaler = torch.amp.GradScaler(DEVICE)


@torch.compile(backend=BACKEND)
def train_step(x, y):
    with torch.autocast(DEVICE, dtype=torch.bfloat16):
        loss = nn.functional.mse_loss(model(x).float(), y)
    scaler.scale(loss).backward()
    scaler.step(opt)
    scaler.update()
    opt.zero_grad(set_to_none=True)
    return loss.detach()


for _ in range(4):
    x = torch.randn(8, 16, device=DEVICE)
    loss = train_step(x, x.sum(-1, keepdim=True))
print(float(loss))
