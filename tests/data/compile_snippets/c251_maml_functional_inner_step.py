"""MAML-style meta-learning for few-shot regression: the inner adaptation step is compiled and
written with torch.func (functional_call and grad over a dict of parameters), the outer loss is
back-propagated through the adapted parameters."""
import torch
import torch.nn as nn
from torch.func import functional_call, grad

torch.manual_seed(0)

net = nn.Sequential(nn.Linear(1, 40), nn.ReLU(), nn.Linear(40, 40), nn.ReLU(), nn.Linear(40, 1))
meta_opt = torch.optim.Adam(net.parameters(), lr=1e-3)


def task_loss(params, x, y):
    return (functional_call(net, params, (x,)) - y).pow(2).mean()


@torch.compile
def inner_adapt(params, x, y, inner_lr=0.01):
    grads = grad(task_loss)(params, x, y)
    return {name: p - inner_lr * grads[name] for name, p in params.items()}


def sine_task():
    amp, phase = torch.rand(()) * 4.9 + 0.1, torch.rand(()) * 3.1416
    x = torch.rand(20, 1) * 10 - 5
    return x, amp * torch.sin(x + phase)


for _ in range(4):
    meta_loss = 0.0
    for _ in range(3):
        x, y = sine_task()
        fast = inner_adapt(dict(net.named_parameters()), x[:10], y[:10])
        meta_loss = meta_loss + task_loss(fast, x[10:], y[10:])
    meta_loss.backward()
    meta_opt.step()
    meta_opt.zero_grad()
print(f"meta loss {meta_loss.item():.4f}")
