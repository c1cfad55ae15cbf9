import torch

torch.manual_seed(0)
w = torch.zeros(10)


@torch.compile
def sgd(w, g, lr):
    return w - lr * g


sched = [0.1 * (0.95 ** i) for i in range(40)]
for step, lr in enumerate(sched):
    g = torch.randn(10)
    w = sgd(w, g, lr)
print(w.sum())
