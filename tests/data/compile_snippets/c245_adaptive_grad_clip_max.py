"""Layer-wise adaptive gradient clipping (in the spirit of NFNets and LARS) in a compiled helper: each
parameter's gradient is scaled down when its norm exceeds a fraction of the parameter's own norm,
with a floor on the parameter norm for freshly initialised (near-zero) weights."""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


@torch.compile
def adaptive_clip_(parameters, clip_factor=0.01, eps=1e-3):
    for p in parameters:
        param_norm = p.detach().norm()
        grad_norm = p.grad.detach().norm()
        max_norm = max(param_norm, eps) * clip_factor
        scale = torch.clamp(max_norm / grad_norm.clamp(min=1e-6), max=1.0)
        p.grad.detach().mul_(scale)


model = nn.Sequential(nn.Conv2d(3, 16, 3, padding=1), nn.ReLU(), nn.AdaptiveAvgPool2d(1), nn.Flatten(),
                      nn.Linear(16, 10))
opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
params = [p for p in model.parameters()]
for _ in range(4):
    loss = F.cross_entropy(model(torch.randn(8, 3, 16, 16)), torch.randint(0, 10, (8,)))
    loss.backward()
    adaptive_clip_(params)
    opt.step()
    opt.zero_grad()
print(f"loss {loss.item():.4f}")
