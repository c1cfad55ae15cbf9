# Gaudi training loop with a hand-written global-norm gradient clip, compiled on its own with
# the HPU backend: the clip coefficient is min(1.0, max_norm / total_norm) as in the usual
# recipe, applied in place to every gradient, and the norm is returned for logging.
import habana_frameworks.torch.core as htcore
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
device = torch.device("cpu")  # "hpu" on Gaudi

MAX_NORM = 1.0

model = nn.Sequential(nn.Linear(16, 64), nn.GELU(), nn.Linear(64, 64), nn.GELU(), nn.Linear(64, 4)).to(device)
opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
params = [p for p in model.parameters() if p.requires_grad]


def clip_grads_(params, max_norm):
    grads = [p.grad for p in params]
    total_norm = torch.linalg.vector_norm(torch.stack([torch.linalg.vector_norm(g) for g in grads]))
    clip_coef = min(1.0, max_norm / (total_norm + 1e-6))
    for g in grads:
        g.mul_(clip_coef)
    return total_norm


clip_fn = torch.compile(clip_grads_, backend="hpu_backend")
for step in range(5):
    x = torch.randn(8, 16, device=device)
    y = torch.randint(0, 4, (8,), device=device)
    loss = F.cross_entropy(model(x), y)
    loss.backward()
    htcore.mark_step()
    grad_norm = clip_fn(params, MAX_NORM)
    opt.step()
    opt.zero_grad()
    htcore.mark_step()
print(loss.item(), grad_norm.item())
