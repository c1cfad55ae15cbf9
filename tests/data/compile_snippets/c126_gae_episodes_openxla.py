"""Advantage targets for PPO on a TPU, one finished episode at a time.

Episodes end when the toy environment terminates, so they have different lengths; the returns
and GAE advantages of each finished episode are computed by a function compiled for XLA.
"""
import torch
import torch_xla.core.xla_model as xm

torch.manual_seed(0)
device = xm.xla_device()


def discounted_advantages(rewards, values, gamma, lam):
    steps = rewards.shape[0]
    adv = torch.zeros_like(rewards)
    running = torch.zeros((), device=rewards.device)
    for t in reversed(range(steps)):
        delta = rewards[t] + gamma * values[t + 1] - values[t]
        running = delta + gamma * lam * running
        adv[t] = running
    return adv


@torch.compile(backend="openxla")
def ppo_targets(rewards, values, gamma=0.99, lam=0.95):
    adv = discounted_advantages(rewards, values, gamma, lam)
    returns = adv + values[:-1]
    return (adv - adv.mean()) / (adv.std() + 1e-8), returns


def run_episode(max_len=40):
    rewards = []
    while len(rewards) < max_len:
        rewards.append(float(torch.rand(())))
        if torch.rand(()) < 0.08:
            break
    return torch.tensor(rewards, device=device)


for episode in range(12):
    rewards = run_episode()
    values = torch.randn(rewards.shape[0] + 1, device=device)
    adv, ret = ppo_targets(rewards, values)
    xm.mark_step()
    print(episode, rewards.shape[0], float(ret.mean()))
