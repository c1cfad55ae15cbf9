"""DQN on a toy replay buffer: the compiled TD loss reads the online network and a module-level
`target_net`, and every 4 updates the target is refreshed the way many RL scripts do it,
`target_net = copy.deepcopy(online_net)`, rebinding the global to a fresh copy."""
import copy

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
online_net = nn.Sequential(nn.Linear(8, 64), nn.ReLU(), nn.Linear(64, 4))
target_net = copy.deepcopy(online_net)
GAMMA = 0.99


@torch.compile
def td_loss(obs, actions, rewards, next_obs, dones):
    q = online_net(obs).gather(1, actions.unsqueeze(1)).squeeze(1)
    with torch.no_grad():
        next_q = target_net(next_obs).max(dim=1).values
        target = rewards + GAMMA * (1 - dones) * next_q
    return F.smooth_l1_loss(q, target)


opt = torch.optim.Adam(online_net.parameters(), lr=1e-3)
for update in range(24):
    obs, next_obs = torch.randn(32, 8), torch.randn(32, 8)
    actions = torch.randint(0, 4, (32,))
    rewards, dones = torch.randn(32), (torch.rand(32) < 0.1).float()
    loss = td_loss(obs, actions, rewards, next_obs, dones)
    loss.backward()
    opt.step()
    opt.zero_grad()
    if update % 4 == 3:
        target_net = copy.deepcopy(online_net)
print(f"td loss {loss.item():.4f}")
