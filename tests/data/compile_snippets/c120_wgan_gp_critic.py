"""WGAN-GP critic updates on 2-D toy data (a ring of Gaussians).

The critic loss is compiled: the Wasserstein estimate plus the gradient penalty on points
interpolated between real and generated samples.
"""
import math

import torch
import torch.nn as nn

torch.manual_seed(0)


def ring_batch(n=64, modes=8):
    k = torch.randint(0, modes, (n,))
    ang = k.float() * 2 * math.pi / modes
    return torch.stack([ang.cos(), ang.sin()], dim=1) * 2 + 0.05 * torch.randn(n, 2)


critic = nn.Sequential(nn.Linear(2, 64), nn.LeakyReLU(0.2), nn.Linear(64, 64),
                       nn.LeakyReLU(0.2), nn.Linear(64, 1))
gen = nn.Sequential(nn.Linear(8, 64), nn.ReLU(), nn.Linear(64, 2))
opt_c = torch.optim.Adam(critic.parameters(), lr=1e-4, betas=(0.5, 0.9))


def gradient_penalty(net, real, fake):
    eps = torch.rand(real.size(0), 1)
    mixed = (eps * real + (1 - eps) * fake).requires_grad_(True)
    scores = net(mixed)
    grads = torch.autograd.grad(scores.sum(), mixed, create_graph=True)[0]
    return ((grads.norm(2, dim=1) - 1) ** 2).mean()


@torch.compile
def critic_loss(real, fake, lam=10.0):
    wdist = critic(fake).mean() - critic(real).mean()
    return wdist + lam * gradient_penalty(critic, real, fake)


for it in range(4):
    real = ring_batch()
    with torch.no_grad():
        fake = gen(torch.randn(64, 8))
    loss = critic_loss(real, fake)
    opt_c.zero_grad()
    loss.backward()
    opt_c.step()
print(loss.detach())
