# "if val_loss < best": a comparison of device tensors in a Python if, once per epoch.
import torch
import torch_xla
import torch_xla.core.xla_model as xm

device = torch_xla.device()
torch.manual_seed(7)
model = torch.nn.Linear(5, 1).to(device)
opt = torch.optim.SGD(model.parameters(), lr=0.05)
best = torch.tensor(float("inf"), device=device)
xs, ys = torch.randn(16, 5), torch.randn(16, 1)
for epoch in range(4):
    for i in range(0, 16, 8):
        x, y = xs[i:i + 8].to(device), ys[i:i + 8].to(device)
        opt.zero_grad()
        loss = torch.nn.functional.mse_loss(model(x), y)
        loss.backward()
        opt.step()
        xm.mark_step()
    with torch.no_grad():
        val = torch.nn.functional.mse_loss(model(xs.to(device)), ys.to(device))
    if val < best:
        best = val
        print("new best at epoch", epoch)
    xm.mark_step()
