import torch

torch.manual_seed(0)

torch._dynamo.config.capture_scalar_outputs = True


@torch.compile
def normalize_by_max(x):
    m = x.max().item()
    return x / m


for _ in range(4):
    normalize_by_max(torch.rand(9) + 0.5)
