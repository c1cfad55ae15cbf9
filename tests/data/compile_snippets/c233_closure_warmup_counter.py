"""Regression training with a linear loss warm-up: a factory builds the train step, which keeps
its own step count and scales the loss down during the first steps."""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


def make_train_step(model, opt, warmup=20):
    step = 0

    def scaled_loss(x, y):
        scale = min(1.0, (step + 1) / warmup)
        return scale * F.mse_loss(model(x), y)

    compiled_loss = torch.compile(scaled_loss)

    def train_step(x, y):
        nonlocal step
        loss = compiled_loss(x, y)
        loss.backward()
        opt.step()
        opt.zero_grad()
        step += 1
        return loss

    return train_step


model = nn.Sequential(nn.Linear(16, 64), nn.SiLU(), nn.Linear(64, 1))
train_step = make_train_step(model, torch.optim.Adam(model.parameters(), lr=1e-3))
for _ in range(12):
    x = torch.randn(32, 16)
    loss = train_step(x, x.sum(dim=1, keepdim=True))
print(f"loss {loss.item():.4f}")
