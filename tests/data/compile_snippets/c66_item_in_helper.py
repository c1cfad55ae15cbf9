import torch

torch.manual_seed(0)


def temperature_of(logits):
    return max(0.5, logits.std().item())


@torch.compile
def sample_probs(logits):
    t = temperature_of(logits)
    return torch.softmax(logits / t, dim=-1)


for _ in range(4):
    sample_probs(torch.randn(2, 10))
