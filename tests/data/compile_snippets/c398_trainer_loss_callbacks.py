"""Small trainer whose compiled training step reports the loss to registered callbacks.

The trainer keeps a list of callback objects, as training frameworks do, and hands each one the
loss right after computing it inside the step it compiles. The only callback installed is an
early-stopping monitor that remembers the best loss seen and counts steps without improvement.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class EarlyStoppingMonitor:
    def __init__(self, patience=3):
        self.patience, self.best, self.bad_steps = patience, float("inf"), 0

    def on_loss(self, loss):
        value = float(loss)
        if value < self.best - 1e-4:
            self.best, self.bad_steps = value, 0
        else:
            self.bad_steps += 1

    @property
    def should_stop(self):
        return self.bad_steps >= self.patience


class Trainer:
    def __init__(self, model, callbacks):
        self.model, self.callbacks = model, callbacks
        self.opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
        self.step_fn = torch.compile(self.training_step)

    def training_step(self, x, y):
        loss = F.cross_entropy(self.model(x), y)
        for cb in self.callbacks:
            cb.on_loss(loss.detach())
        return loss

    def fit(self, batches):
        for x, y in batches:
            self.step_fn(x, y).backward()
            self.opt.step()
            self.opt.zero_grad()
            if any(getattr(cb, "should_stop", False) for cb in self.callbacks):
                break


monitor = EarlyStoppingMonitor()
model = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 4))
Trainer(model, [monitor]).fit([(torch.randn(8, 16), torch.randint(0, 4, (8,))) for _ in range(5)])
print(round(monitor.best, 3), monitor.bad_steps)
