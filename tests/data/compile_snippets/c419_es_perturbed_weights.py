"""Evolution-strategies fine-tuning of a small policy: each candidate is the flat weight vector
plus Gaussian noise, loaded into the network with `vector_to_parameters` inside the compiled
fitness function; the update averages the noise weighted by the normalized returns."""
import torch
import torch.nn as nn
from torch.nn.utils import parameters_to_vector, vector_to_parameters

torch.manual_seed(0)
policy = nn.Sequential(nn.Linear(6, 32), nn.Tanh(), nn.Linear(32, 2))
target = torch.randn(2, 6)
SIGMA, LR, POP = 0.05, 0.02, 8


@torch.compile
def fitness(flat, obs):
    vector_to_parameters(flat, policy.parameters())
    return -((policy(obs) - obs @ target.T) ** 2).mean()


theta = parameters_to_vector(policy.parameters()).detach().clone()
with torch.no_grad():
    for gen in range(4):
        obs = torch.randn(64, 6)
        noise = torch.randn(POP, theta.numel())
        returns = torch.stack([fitness(theta + SIGMA * eps, obs) for eps in noise])
        adv = (returns - returns.mean()) / (returns.std() + 1e-8)
        theta += LR / (POP * SIGMA) * (adv[:, None] * noise).sum(0)
        print(f"generation {gen}: mean fitness {returns.mean():.4f}")
