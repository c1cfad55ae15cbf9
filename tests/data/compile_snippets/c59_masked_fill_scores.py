import torch

torch.manual_seed(0)


@torch.compile
def masked_softmax(scores, mask):
    scores = scores.masked_fill(~mask, float("-inf"))
    return torch.softmax(scores, dim=-1)


for _ in range(6):
    s = torch.randn(2, 5, 5)
    m = torch.rand(2, 5, 5) > 0.3
    m[..., 0] = True
    masked_softmax(s, m)
