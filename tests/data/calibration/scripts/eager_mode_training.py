# Eager mode: every op runs as its own graph, compiled once per op signature.
import torch
import torch_xla
import torch_xla.core.xla_model as xm

torch_xla.experimental.eager_mode(True)
device = torch_xla.device()
torch.manual_seed(0)
model = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.ReLU(), torch.nn.Linear(16, 1)).to(device)
opt = torch.optim.SGD(model.parameters(), lr=0.05)
for step in range(5):
    x = torch.randn(4, 8).to(device)
    opt.zero_grad()
    loss = model(x).pow(2).mean()
    loss.backward()
    opt.step()
print(loss.item())
