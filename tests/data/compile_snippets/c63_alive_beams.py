import torch

torch.manual_seed(0)


@torch.compile
def score(beams):
    return torch.stack([b.sum() for b in beams]).softmax(0)


alive = [torch.randn(5) for _ in range(12)]
while alive:
    probs = score(alive)
    alive = alive[:-1]
