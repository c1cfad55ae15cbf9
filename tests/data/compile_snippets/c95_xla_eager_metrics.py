import torch
import torch.nn as nn
import torch_xla
import torch_xla.core.xla_model as xm

torch.manual_seed(0)
device = xm.xla_device()

model = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 4)).to(device)
opt = torch.optim.SGD(model.parameters(), lr=0.05)


def forward_loss(x, y):
    return nn.functional.cross_entropy(model(x), y)


compiled_loss = torch_xla.compile(forward_loss, full_graph=True)
losses = []
for i in range(6):
    x = torch.randn(8, 16, device=device)
    y = torch.randint(0, 4, (8,), device=device)
    loss = compiled_loss(x, y)
    loss.backward()
    opt.step()
    opt.zero_grad()
    xm.mark_step()
    losses.append(loss.detach())
    if i % 3 == 2:
        print(f"step {i} loss {torch.stack(losses).mean().item():.4f}")
