import torch
import torch.nn as nn

torch.manual_seed(0)

encoder = nn.Linear(24, 16)


@torch.compile(dynamic=True)
def contrastive_logits(batch):
    n = batch.shape[0] // 2
    z = nn.functional.normalize(encoder(batch), dim=-1)
    anchors, positives = z[:n], z[n : 2 * n]
    return anchors @ positives.T / 0.07


for pairs in (8, 12, 6, 10, 16):
    logits = contrastive_logits(torch.randn(2 * pairs, 24))
print(logits.shape)
