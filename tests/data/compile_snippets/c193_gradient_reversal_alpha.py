"""Domain-adversarial training (DANN): a custom autograd Function reverses and scales the gradient
flowing into the feature extractor, with the reversal strength alpha following the usual schedule
2 / (1 + exp(-10 p)) - 1 as training progresses."""
import math

import torch
import torch.nn as nn

torch.manual_seed(0)


class GradientReversal(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, alpha):
        ctx.alpha = alpha
        return x.view_as(x)

    @staticmethod
    def backward(ctx, grad):
        grad_x = -ctx.alpha * grad if ctx.needs_input_grad[0] else None
        return grad_x, None


features = nn.Sequential(nn.Linear(16, 32), nn.ReLU())
label_head = nn.Linear(32, 3)
domain_head = nn.Sequential(nn.Linear(32, 16), nn.ReLU(), nn.Linear(16, 2))
params = [*features.parameters(), *label_head.parameters(), *domain_head.parameters()]
opt = torch.optim.SGD(params, lr=0.01, momentum=0.9)


@torch.compile
def dann_loss(x_src, y_src, x_tgt, alpha):
    f_src, f_tgt = features(x_src), features(x_tgt)
    cls = nn.functional.cross_entropy(label_head(f_src), y_src)
    feats = torch.cat([f_src, f_tgt])
    domains = torch.cat([torch.zeros(len(f_src)), torch.ones(len(f_tgt))]).long()
    dom = nn.functional.cross_entropy(domain_head(GradientReversal.apply(feats, alpha)), domains)
    return cls + dom


total_steps = 10
for step in range(total_steps):
    p = step / total_steps
    alpha = 2.0 / (1.0 + math.exp(-10 * p)) - 1.0
    loss = dann_loss(torch.randn(8, 16), torch.randint(0, 3, (8,)), torch.randn(8, 16), alpha)
    loss.backward()
    opt.step()
    opt.zero_grad()
print(f"loss {loss.item():.4f}")
