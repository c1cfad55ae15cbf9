"""Data-dependent initialization (LSUV-style) of an MLP regressor: each `nn.Linear` gets a forward
pre-hook that, on the first batch it sees, rescales the layer's weight so its outputs have unit
variance and then removes itself through the handle it keeps, so later batches run the plain
layers."""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class LSUVInit:
    def __init__(self, layer):
        self.handle = layer.register_forward_pre_hook(self)

    def __call__(self, layer, args):
        with torch.no_grad():
            std = F.linear(args[0], layer.weight).std()
            layer.weight.div_(std + 1e-6)
        self.handle.remove()


model = nn.Sequential(nn.Linear(16, 64), nn.Tanh(), nn.Linear(64, 64), nn.Tanh(), nn.Linear(64, 1))
for layer in model:
    if isinstance(layer, nn.Linear):
        LSUVInit(layer)
step_model = torch.compile(model)
opt = torch.optim.Adam(model.parameters(), lr=1e-3)
for step in range(5):
    x = torch.randn(64, 16)
    y = x[:, :4].sum(-1, keepdim=True)
    loss = F.mse_loss(step_model(x), y)
    loss.backward()
    opt.step()
    opt.zero_grad()
print(f"loss {loss.item():.4f}")
