"""Uncertainty estimation with Monte-Carlo dropout: at evaluation time the regressor keeps its
dropout layers active and averages several stochastic passes; the random state is forked and
reseeded so every evaluation of the validation set sees the same dropout masks."""
import torch
import torch.nn as nn

torch.manual_seed(0)

model = nn.Sequential(nn.Linear(10, 64), nn.ReLU(), nn.Dropout(0.2), nn.Linear(64, 64), nn.ReLU(),
                      nn.Dropout(0.2), nn.Linear(64, 1))


@torch.compile
def mc_predict(x, passes=8, seed=1234):
    with torch.random.fork_rng():
        torch.manual_seed(seed)
        samples = torch.stack([model(x) for _ in range(passes)])
    return samples.mean(dim=0), samples.std(dim=0)


model.train()  # dropout stays on for MC sampling
with torch.no_grad():
    for batch in range(3):
        mean, std = mc_predict(torch.randn(16, 10))
print(mean.shape, std.mean())
