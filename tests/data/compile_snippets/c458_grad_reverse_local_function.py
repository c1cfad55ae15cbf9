"""Unsupervised domain adaptation (DANN) for a sensor-activity classifier: the shared features go
to the label head and, through a gradient-reversal layer, to a domain discriminator. The
`grad_reverse(x, alpha)` helper defines its reversal `autograd.Function` around the current
`alpha` and applies it; `alpha` follows the usual DANN ramp over the training steps."""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


def grad_reverse(x, alpha):
    class _Reverse(torch.autograd.Function):
        @staticmethod
        def forward(ctx, t):
            return t.view_as(t)

        @staticmethod
        def backward(ctx, grad):
            return -alpha * grad

    return _Reverse.apply(x)


class DANN(nn.Module):
    def __init__(self, channels=6, dim=32, classes=4):
        super().__init__()
        self.features = nn.Sequential(nn.Linear(channels * 16, dim), nn.ReLU(), nn.Linear(dim, dim))
        self.label_head = nn.Linear(dim, classes)
        self.domain_head = nn.Sequential(nn.Linear(dim, dim), nn.ReLU(), nn.Linear(dim, 1))

    def forward(self, x, alpha):
        feats = self.features(x.flatten(1))
        return self.label_head(feats), self.domain_head(grad_reverse(feats, alpha)).squeeze(-1)


model = DANN()
step_model = torch.compile(model)
opt = torch.optim.Adam(model.parameters(), lr=1e-3)
STEPS = 6
for step in range(STEPS):
    alpha = 2.0 / (1.0 + math.exp(-10 * step / STEPS)) - 1.0
    source, labels = torch.randn(8, 6, 16), torch.randint(0, 4, (8,))
    target = torch.randn(8, 6, 16) + 0.5
    logits, domain = step_model(torch.cat([source, target]), alpha)
    domain_labels = torch.cat([torch.zeros(8), torch.ones(8)])
    loss = F.cross_entropy(logits[:8], labels) + F.binary_cross_entropy_with_logits(domain, domain_labels)
    opt.zero_grad()
    loss.backward()
    opt.step()
print(f"loss {loss.item():.4f}")
