import torch

torch.manual_seed(0)


@torch.compile
def combine(feats):
    return sum(v.mean() for v in feats.values())


feats = {}
for i in range(12):
    feats[f"f{i}"] = torch.randn(3)
    combine(feats)
