import torch

torch.manual_seed(0)
weights = [torch.randn(6, 6) for _ in range(12)]


@torch.compile
def layer(x, w, depth):
    return torch.tanh(x @ w) * (1.0 / (depth + 1))


x = torch.randn(2, 6)
for i, w in enumerate(weights):
    x = layer(x, w, i)
