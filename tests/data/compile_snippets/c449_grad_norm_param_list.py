"""Training-health logging: after each backward, a compiled helper computes the global gradient
norm of the trainable parameters, which the trainer collected once into a list when it built the
optimizer, and the trainer logs it next to the loss."""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


@torch.compile
def global_grad_norm(parameters, norm_type=2.0):
    norms = [p.grad.detach().norm(norm_type) for p in parameters if p.grad is not None]
    return torch.linalg.vector_norm(torch.stack(norms), norm_type)


model = nn.Sequential(nn.Linear(20, 64), nn.Tanh(), nn.Linear(64, 64), nn.Tanh(), nn.Linear(64, 1))
trainable = [p for p in model.parameters() if p.requires_grad]
opt = torch.optim.SGD(trainable, lr=0.01)
history = []
for step in range(5):
    x = torch.randn(32, 20)
    loss = F.mse_loss(model(x), x[:, :1])
    loss.backward()
    history.append((loss.detach(), global_grad_norm(trainable)))
    opt.step()
    opt.zero_grad()
print([(round(float(l), 4), round(float(g), 4)) for l, g in history])
