import torch

torch.manual_seed(0)


@torch.compile
def cosine_lr(step, total):
    return 0.5 * (1 + torch.cos(torch.pi * step / total))


total = torch.tensor(100.0)
for s in range(12):
    cosine_lr(torch.tensor(float(s)), total)
