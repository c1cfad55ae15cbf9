# Eager-mode training (each op runs on its own) with torch_xla.sync() at the end of each step and a
# scalar learning rate schedule done by hand.
import torch
import torch_xla

torch_xla.experimental.eager_mode(True)
device = torch_xla.device()
torch.manual_seed(23)
model = torch.nn.Linear(4, 2).to(device)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for step in range(4):
    for g in opt.param_groups:
        g["lr"] = 0.1 * (0.5 ** step)
    x = torch.randn(2, 4).to(device)
    loss = model(x).pow(2).sum()
    opt.zero_grad()
    loss.backward()
    opt.step()
    torch_xla.sync()
print(loss.item())
