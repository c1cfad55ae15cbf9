"""`openxla` FGSM adversarial training: each step asks the compiled classifier for the gradient
of the loss with respect to a copy of the inputs that requires grad, trains on the perturbed
inputs, and every step ends with a quick robustness probe on a held-out batch under
`torch.no_grad()`."""
import torch
import torch.nn as nn
import torch.nn.functional as F

try:
    import torch_xla.core.xla_model as xm
    BACKEND, device = "openxla", xm.xla_device()
except ImportError:  # CPU run without torch_xla
    xm, BACKEND, device = None, "eager", torch.device("cpu")

torch.manual_seed(0)


class SmallNet(nn.Module):
    def __init__(self, dim=30, classes=5):
        super().__init__()
        self.fc1 = nn.Linear(dim, 64)
        self.fc2 = nn.Linear(64, classes)

    def forward(self, x):
        return self.fc2(F.relu(self.fc1(x)))


model = SmallNet().to(device)
cmodel = torch.compile(model, backend=BACKEND)
opt = torch.optim.SGD(model.parameters(), lr=0.05)
eps = 0.1
held_x = torch.randn(32, 30, device=device)
held_y = torch.randint(0, 5, (32,), device=device)
for step in range(4):
    x = torch.randn(32, 30, device=device)
    y = torch.randint(0, 5, (32,), device=device)
    x_req = x.clone().requires_grad_(True)
    grad_x, = torch.autograd.grad(F.cross_entropy(cmodel(x_req), y), x_req)
    x_adv = (x + eps * grad_x.sign()).detach()
    loss = F.cross_entropy(cmodel(x_adv), y)
    loss.backward()
    opt.step()
    opt.zero_grad()
    with torch.no_grad():
        robust_acc = (cmodel(held_x).argmax(-1) == held_y).float().mean()
    if xm is not None:
        xm.mark_step()
print(f"loss {loss.item():.4f} acc {robust_acc.item():.3f}")
