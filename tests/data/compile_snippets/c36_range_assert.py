import torch

torch.manual_seed(0)


@torch.compile
def log_prob(p):
    assert (p > 0).all(), "probabilities must be positive"
    return p.log().sum()


for _ in range(4):
    log_prob(torch.rand(6) + 0.1)
