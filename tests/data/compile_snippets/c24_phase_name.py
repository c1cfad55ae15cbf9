import torch

torch.manual_seed(0)


@torch.compile
def tagged_step(x, phase):
    if phase.startswith("warm"):
        return x * 0.1
    return x


for epoch in range(10):
    tagged_step(torch.randn(3), f"warmup{epoch}" if epoch < 10 else "main")
