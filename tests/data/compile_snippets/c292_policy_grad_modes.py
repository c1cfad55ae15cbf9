# PPO-style training of a compiled actor-critic on Gaudi. Each iteration collects a rollout
# under torch.no_grad(), runs the clipped policy update with gradients, and then plays a few
# evaluation episodes under torch.inference_mode(), all through the same compiled policy.
import habana_frameworks.torch.core as htcore
import torch
import torch.nn as nn

torch.manual_seed(0)


class ActorCritic(nn.Module):
    def __init__(self, obs_dim=8, n_actions=4, hidden=32):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(obs_dim, hidden), nn.Tanh(), nn.Linear(hidden, hidden), nn.Tanh())
        self.pi = nn.Linear(hidden, n_actions)
        self.v = nn.Linear(hidden, 1)

    def forward(self, obs):
        h = self.body(obs)
        return self.pi(h), self.v(h).squeeze(-1)


def fake_env_step(obs, action):
    reward = (action == obs.argmax(-1) % 4).float()
    return obs.roll(1, dims=-1) + 0.1 * torch.randn_like(obs), reward


model = ActorCritic()
policy = torch.compile(model, backend="hpu_backend")
opt = torch.optim.Adam(model.parameters(), lr=3e-4)

for iteration in range(3):
    obs, observations, actions, logps, rewards = torch.randn(16, 8), [], [], [], []
    with torch.no_grad():
        for t in range(4):
            logits, value = policy(obs)
            dist = torch.distributions.Categorical(logits=logits)
            action = dist.sample()
            observations.append(obs)
            actions.append(action)
            logps.append(dist.log_prob(action))
            obs, reward = fake_env_step(obs, action)
            rewards.append(reward)
    obs_b, act_b, old_logp = torch.cat(observations), torch.cat(actions), torch.cat(logps)
    returns = torch.cat(rewards)
    logits, values = policy(obs_b)
    dist = torch.distributions.Categorical(logits=logits)
    ratio = (dist.log_prob(act_b) - old_logp).exp()
    adv = returns - values.detach()
    loss = -torch.min(ratio * adv, ratio.clamp(0.8, 1.2) * adv).mean() + 0.5 * (returns - values).pow(2).mean()
    loss.backward()
    opt.step()
    opt.zero_grad()
    htcore.mark_step()

    with torch.inference_mode():
        eval_obs, score = torch.randn(16, 8), 0.0
        for t in range(4):
            logits, _ = policy(eval_obs)
            eval_obs, reward = fake_env_step(eval_obs, logits.argmax(-1))
            score += reward.mean().item()
print(loss.item(), score)
