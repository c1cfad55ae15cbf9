# Metric learning with a batch-hard triplet loss. The sampler drops identities with a single
# image, so batch sizes vary from step to step; the compiled loss walks the batch anchor by
# anchor, picks the hardest positive and negative for each, and averages the hinge.
import random

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
random.seed(0)

MARGIN = 0.3

embedder = nn.Sequential(nn.Linear(64, 64), nn.ReLU(), nn.Linear(64, 16))


def batch_hard_triplet(emb, labels):
    dist = torch.cdist(emb, emb)
    losses = []
    for anchor_dist, label in zip(dist, labels):
        same = labels == label
        hardest_pos = anchor_dist.masked_fill(~same, 0.0).max()
        hardest_neg = anchor_dist.masked_fill(same, float("inf")).min()
        losses.append(F.relu(hardest_pos - hardest_neg + MARGIN))
    return torch.stack(losses).mean()


loss_fn = torch.compile(batch_hard_triplet)
opt = torch.optim.Adam(embedder.parameters(), lr=1e-3)
for step in range(10):
    n_ids = random.randint(3, 8)
    labels = torch.arange(n_ids).repeat_interleave(2)
    emb = F.normalize(embedder(torch.randn(labels.numel(), 64)), dim=-1)
    loss = loss_fn(emb, labels)
    loss.backward()
    opt.step()
    opt.zero_grad()
print(loss.item())
