"""Monte-Carlo dropout uncertainty for a tabular regressor: the compiled `predict` puts the model
in `eval()` (frozen BatchNorm statistics), switches only its dropout layers back to training mode
with `model.apply(enable_dropout)`, and averages several stochastic passes."""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)

model = nn.Sequential(nn.Linear(12, 64), nn.BatchNorm1d(64), nn.ReLU(), nn.Dropout(0.2),
                      nn.Linear(64, 64), nn.ReLU(), nn.Dropout(0.2), nn.Linear(64, 1))


def enable_dropout(module):
    if isinstance(module, nn.Dropout):
        module.train()


@torch.compile
def predict(x, passes=8):
    model.eval()
    model.apply(enable_dropout)
    samples = torch.stack([model(x) for _ in range(passes)])
    return samples.mean(0), samples.std(0)


opt = torch.optim.Adam(model.parameters(), lr=1e-3)
for step in range(20):
    x = torch.randn(64, 12)
    model.train()
    loss = F.mse_loss(model(x), x[:, :1] * 2)
    loss.backward()
    opt.step()
    opt.zero_grad()
    if step % 5 == 4:
        with torch.no_grad():
            mean, std = predict(torch.randn(16, 12))
        print(step, f"mean std {std.mean().item():.4f}")
