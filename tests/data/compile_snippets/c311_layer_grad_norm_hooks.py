# Training with per-layer gradient monitoring: every Linear layer gets a full backward hook
# that stores the norm of its output gradient, and the compiled model is trained as usual;
# the norms are printed at the end to spot vanishing layers.
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)

grad_norms = {}


def make_hook(name):
    def hook(module, grad_input, grad_output):
        grad_norms[name] = grad_output[0].detach().norm()
    return hook


model = nn.Sequential(nn.Linear(20, 64), nn.Tanh(), nn.Linear(64, 64), nn.Tanh(), nn.Linear(64, 3))
for name, module in model.named_modules():
    if isinstance(module, nn.Linear):
        module.register_full_backward_hook(make_hook(name))

compiled = torch.compile(model)
opt = torch.optim.SGD(model.parameters(), lr=0.05)
for step in range(4):
    loss = F.cross_entropy(compiled(torch.randn(16, 20)), torch.randint(0, 3, (16,)))
    loss.backward()
    opt.step()
    opt.zero_grad()
print({k: round(v.item(), 4) for k, v in grad_norms.items()})
