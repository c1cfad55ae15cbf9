import torch

torch.manual_seed(0)

cache = {"key": torch.zeros(3), "value": torch.zeros(3)}


@torch.compile
def lookup(k):
    if torch.equal(cache["key"], k):
        return cache["value"]
    return k * 3


for i in range(4):
    lookup(torch.full((3,), float(i)))
