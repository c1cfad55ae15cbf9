import torch


@torch.compile
def class_balance(labels):
    classes, counts = labels.unique(return_counts=True)
    return counts.float() / counts.sum()


torch.manual_seed(0)
for _ in range(4):
    class_balance(torch.randint(0, 4, (20,)))
