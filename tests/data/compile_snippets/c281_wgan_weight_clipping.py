# The original WGAN recipe: after each RMSprop step on the critic, every critic weight is
# clamped to [-c, c] by writing through .data in a compiled helper; the critic is a compiled
# module.
import torch
import torch.nn as nn

torch.manual_seed(0)

CLIP_VALUE = 0.01
N_CRITIC = 3


@torch.compile
def clip_critic_weights(critic, clip_value):
    for p in critic.parameters():
        p.data.clamp_(-clip_value, clip_value)


generator = nn.Sequential(nn.Linear(8, 32), nn.ReLU(), nn.Linear(32, 16))
critic = nn.Sequential(nn.Linear(16, 32), nn.LeakyReLU(0.2), nn.Linear(32, 1))
crit = torch.compile(critic)
opt_g = torch.optim.RMSprop(generator.parameters(), lr=5e-5)
opt_c = torch.optim.RMSprop(critic.parameters(), lr=5e-5)

for it in range(3):
    for _ in range(N_CRITIC):
        real = torch.randn(8, 16) + 1.0
        fake = generator(torch.randn(8, 8)).detach()
        loss_c = crit(fake).mean() - crit(real).mean()
        loss_c.backward()
        opt_c.step()
        opt_c.zero_grad()
        clip_critic_weights(critic, CLIP_VALUE)
    loss_g = -crit(generator(torch.randn(8, 8))).mean()
    loss_g.backward()
    opt_g.step()
    opt_g.zero_grad()
    opt_c.zero_grad()
print(loss_c.item(), loss_g.item())
