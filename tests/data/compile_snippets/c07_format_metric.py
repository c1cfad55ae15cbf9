import torch

torch.manual_seed(0)

lines = []


@torch.compile
def report(acc):
    text = "acc={:.3f}".format(acc.mean())
    lines.append(text)
    return acc * 100


for _ in range(3):
    report(torch.rand(8))
