"""Sharded evaluation emulated in one process, with the padding a distributed sampler does by
default: every rank's shard of a split has the same length (short shards repeat samples, with a
zero weight), and the compiled evaluation step still guards against an empty batch."""
import torch
import torch.nn as nn

torch.manual_seed(0)
WORLD = 4

model = nn.Sequential(nn.Linear(12, 32), nn.ReLU(), nn.Linear(32, 3)).eval()


@torch.compile
def eval_sums(x, y, weight):
    if x.numel() == 0:
        return x.new_zeros(()), x.new_zeros(())
    logits = model(x)
    correct = ((logits.argmax(-1) == y).float() * weight).sum()
    loss = (nn.functional.cross_entropy(logits, y, reduction="none") * weight).sum()
    return loss, correct


def padded_shard(n, rank):
    per_rank = -(-n // WORLD)
    index = torch.arange(rank * per_rank, (rank + 1) * per_rank)
    weight = (index < n).float()
    return index % n, weight


splits = {name: (torch.randn(n, 12), torch.randint(0, 3, (n,))) for name, n in
          (("valid", 27), ("test", 9), ("ood", 5))}
with torch.no_grad():
    for name, (data_x, data_y) in splits.items():
        total_loss, total_correct = torch.zeros(()), torch.zeros(())
        for rank in range(WORLD):
            index, weight = padded_shard(len(data_x), rank)
            loss, correct = eval_sums(data_x[index], data_y[index], weight)
            total_loss += loss
            total_correct += correct
        print(f"{name}: loss {total_loss.item() / len(data_x):.4f} acc {total_correct.item() / len(data_x):.3f}")
