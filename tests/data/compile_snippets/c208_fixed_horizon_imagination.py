"""Model-based RL (Dreamer-style actor update): the actor is trained on trajectories imagined by a
learned latent dynamics model over a fixed horizon from a batch of start states."""
import torch
import torch.nn as nn

torch.manual_seed(0)
HORIZON = 6


class WorldModel(nn.Module):
    def __init__(self, latent=16, action=4):
        super().__init__()
        self.dynamics = nn.Linear(latent + action, latent)
        self.reward = nn.Linear(latent, 1)


world = WorldModel().requires_grad_(False)
actor = nn.Sequential(nn.Linear(16, 32), nn.ELU(), nn.Linear(32, 4), nn.Tanh())


def imagine_return(start, horizon=HORIZON, gamma=0.99):
    z, ret = start, 0.0
    for t in range(horizon):
        a = actor(z)
        z = torch.tanh(world.dynamics(torch.cat([z, a], dim=-1)))
        ret = ret + gamma ** t * world.reward(z)
    return -ret.mean()


actor_loss = torch.compile(imagine_return)
opt = torch.optim.Adam(actor.parameters(), lr=3e-4)
for step in range(5):
    loss = actor_loss(torch.randn(32, 16))
    loss.backward()
    opt.step()
    opt.zero_grad()
print(f"actor loss {loss.item():.4f}")
