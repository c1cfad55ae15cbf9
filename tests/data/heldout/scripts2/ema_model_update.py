# An exponential moving average of the weights kept in a copy of the model; the decay warms up
# with the step (a Python float that changes every step) and the EMA model is evaluated at the end.
import copy

import torch
import torch_xla
import torch_xla.core.xla_model as xm

device = torch_xla.device()
torch.manual_seed(61)
model = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.ReLU(),
                            torch.nn.Linear(16, 1)).to(device)
ema = copy.deepcopy(model)
for p in ema.parameters():
    p.requires_grad_(False)
opt = torch.optim.Adam(model.parameters(), lr=1e-2)


@torch.no_grad()
def update_ema(step, max_decay=0.999):
    decay = min(max_decay, (1 + step) / (10 + step))
    for e, p in zip(ema.parameters(), model.parameters()):
        e.mul_(decay).add_(p, alpha=1 - decay)


for step in range(10):
    x, y = torch.randn(16, 8).to(device), torch.randn(16, 1).to(device)
    loss = torch.nn.functional.mse_loss(model(x), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    update_ema(step)
    xm.mark_step()

x, y = torch.randn(16, 8).to(device), torch.randn(16, 1).to(device)
with torch.no_grad():
    print("ema loss", torch.nn.functional.mse_loss(ema(x), y).item())
