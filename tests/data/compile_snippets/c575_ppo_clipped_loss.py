"""Gaudi (`hpu_backend`) PPO update in the CleanRL style: after a rollout, the buffer is shuffled
with `torch.randperm` and split into minibatches, and the compiled loss re-evaluates the actions
under a `Categorical` policy, normalizes the advantages per minibatch, takes the clipped surrogate,
the value loss and the entropy bonus, and returns `approx_kl` and the clip fraction for logging."""
import torch
import torch.nn as nn
from torch.distributions import Categorical

try:
    import habana_frameworks.torch.core as htcore
    BACKEND = "hpu_backend"
except ImportError:  # CPU run without the Gaudi software stack
    htcore, BACKEND = None, "eager"

torch.manual_seed(0)
OBS, ACTIONS, BATCH, MINIBATCH = 8, 4, 256, 64


class Agent(nn.Module):
    def __init__(self):
        super().__init__()
        self.critic = nn.Sequential(nn.Linear(OBS, 64), nn.Tanh(), nn.Linear(64, 1))
        self.actor = nn.Sequential(nn.Linear(OBS, 64), nn.Tanh(), nn.Linear(64, ACTIONS))

    def get_action_and_value(self, x, action=None):
        probs = Categorical(logits=self.actor(x))
        if action is None:
            action = probs.sample()
        return action, probs.log_prob(action), probs.entropy(), self.critic(x)


agent = Agent()
opt = torch.optim.Adam(agent.parameters(), lr=2.5e-4, eps=1e-5)


def ppo_loss(obs, actions, logprobs, advantages, returns, clip_coef=0.2, ent_coef=0.01, vf_coef=0.5):
    _, newlogprob, entropy, newvalue = agent.get_action_and_value(obs, actions)
    logratio = newlogprob - logprobs
    ratio = logratio.exp()
    with torch.no_grad():
        approx_kl = ((ratio - 1) - logratio).mean()
        clipfrac = ((ratio - 1.0).abs() > clip_coef).float().mean()
    advantages = (advantages - advantages.mean()) / (advantages.std() + 1e-8)
    pg_loss = torch.max(-advantages * ratio, -advantages * torch.clamp(ratio, 1 - clip_coef, 1 + clip_coef)).mean()
    v_loss = 0.5 * ((newvalue.view(-1) - returns) ** 2).mean()
    loss = pg_loss - ent_coef * entropy.mean() + vf_coef * v_loss
    return loss, approx_kl, clipfrac


compiled_loss = torch.compile(ppo_loss, backend=BACKEND)
obs = torch.randn(BATCH, OBS)
with torch.no_grad():
    actions, logprobs, _, values = agent.get_action_and_value(obs)
advantages, returns = torch.randn(BATCH), torch.randn(BATCH)
for update_epoch in range(2):
    b_inds = torch.randperm(BATCH)
    for start in range(0, BATCH, MINIBATCH):
        mb = b_inds[start:start + MINIBATCH]
        loss, approx_kl, clipfrac = compiled_loss(obs[mb], actions[mb], logprobs[mb], advantages[mb], returns[mb])
        opt.zero_grad()
        loss.backward()
        nn.utils.clip_grad_norm_(agent.parameters(), 0.5)
        opt.step()
        if htcore is not None:
            htcore.mark_step()
print(f"loss {loss.item():.4f} approx_kl {approx_kl.item():.5f} clipfrac {clipfrac.item():.3f}")
