"""Deep-ensemble evaluation: five independently initialised classifiers of the same
architecture are scored by one compiled evaluation function that takes the member model
as an argument; the predictive entropy of the mean is reported."""
import torch
import torch.nn as nn

torch.manual_seed(0)


def make_member():
    return nn.Sequential(nn.Linear(10, 32), nn.ReLU(), nn.Dropout(0.1), nn.Linear(32, 3)).eval()


members = [make_member() for _ in range(5)]


@torch.compile
def member_probs(model, x):
    return model(x).softmax(-1)


x = torch.randn(16, 10)
with torch.no_grad():
    for _ in range(2):
        probs = torch.stack([member_probs(m, x) for m in members]).mean(0)
entropy = -(probs * probs.clamp_min(1e-8).log()).sum(-1)
print(entropy.mean().item())
