"""Physics-informed training for the 1-D advection equation u_t + c u_x = 0: collocation points are
created with requires_grad, and the compiled loss takes the network's derivatives with respect to
(x, t) through torch.autograd.functional.jacobian to form the PDE residual."""
import math

import torch
import torch.nn as nn

torch.manual_seed(0)
SPEED = 0.5

u = nn.Sequential(nn.Linear(2, 32), nn.Tanh(), nn.Linear(32, 32), nn.Tanh(), nn.Linear(32, 1))


def input_gradients(points):
    jac = torch.autograd.functional.jacobian(lambda p: u(p).sum(), points, create_graph=True)
    return jac[:, 0], jac[:, 1]


@torch.compile
def pinn_loss(points, boundary, boundary_values):
    u_x, u_t = input_gradients(points)
    residual = u_t + SPEED * u_x
    return residual.pow(2).mean() + (u(boundary).squeeze(-1) - boundary_values).pow(2).mean()


opt = torch.optim.Adam(u.parameters(), lr=1e-3)
for _ in range(4):
    points = torch.rand(64, 2, requires_grad=True)
    boundary = torch.stack([torch.rand(16), torch.zeros(16)], dim=1)
    loss = pinn_loss(points, boundary, torch.sin(2 * math.pi * boundary[:, 0]))
    loss.backward()
    opt.step()
    opt.zero_grad()
print(f"loss {loss.item():.4f}")
