"""Evaluate an ensemble of five linear probes on frozen features in bfloat16.

The scoring function is compiled once and called with each probe in turn; the ensemble
prediction is the mean of the probes' class probabilities.
"""
import torch
import torch.nn as nn

torch.manual_seed(0)

backbone = nn.Sequential(nn.Linear(32, 64), nn.GELU()).eval()
probes = [nn.Linear(64, 10).eval() for _ in range(5)]


@torch.compile
def probe_probs(probe, feats):
    with torch.autocast("cpu", dtype=torch.bfloat16):
        logits = probe(feats)
    return logits.float().softmax(-1)


correct = 0
with torch.no_grad():
    for batch in range(4):
        x, y = torch.randn(16, 32), torch.randint(0, 10, (16,))
        feats = backbone(x)
        probs = torch.stack([probe_probs(p, feats) for p in probes]).mean(0)
        correct += int((probs.argmax(-1) == y).sum())
print(correct / 64)
