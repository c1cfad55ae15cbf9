"""ZeRO-style gradient bucketing: every parameter's `.grad` is a view into one flat bucket, and a
compiled helper reports per-parameter gradient norms for the logger, keyed by each view's
position in the bucket, `g.storage_offset()`, which the sharding code uses as the parameter's
id."""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(24, 48), nn.ReLU(), nn.Linear(48, 6))
params = list(model.parameters())
bucket = torch.zeros(sum(p.numel() for p in params))


def attach_grads_to_bucket():
    offset = 0
    for p in params:
        p.grad = bucket[offset:offset + p.numel()].view_as(p)
        offset += p.numel()


@torch.compile
def grad_norms_by_offset(grads):
    return {g.storage_offset(): g.norm() for g in grads}


opt = torch.optim.SGD(params, lr=0.05)
attach_grads_to_bucket()
for step in range(3):
    bucket.zero_()
    x, y = torch.randn(8, 24), torch.randint(0, 6, (8,))
    F.cross_entropy(model(x), y).backward()
    norms = grad_norms_by_offset([p.grad for p in params])
    opt.step()
print({k: round(v.item(), 4) for k, v in norms.items()})
