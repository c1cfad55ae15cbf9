"""`torch_xla.compile` region-proposal training for a two-stage detector: the compiled objectness
loss samples a fixed budget of anchors per image the way torchvision's
`BalancedPositiveNegativeSampler` does, finding the positive and negative anchors with
`torch.where(labels >= 1)[0]` and `torch.where(labels == 0)[0]`, then keeping a random subset of
each with `torch.randperm`."""
import torch
import torch.nn as nn
import torch.nn.functional as F

try:
    import torch_xla
    compile_fn, device = torch_xla.compile, torch_xla.device()
except ImportError:  # CPU run without PyTorch/XLA
    torch_xla, compile_fn, device = None, torch.compile, torch.device("cpu")

torch.manual_seed(0)
ANCHORS = 600


class BalancedPositiveNegativeSampler:
    def __init__(self, batch_size_per_image, positive_fraction):
        self.batch_size_per_image = batch_size_per_image
        self.positive_fraction = positive_fraction

    def __call__(self, labels):
        positive = torch.where(labels >= 1)[0]
        negative = torch.where(labels == 0)[0]
        num_pos = min(positive.numel(), int(self.batch_size_per_image * self.positive_fraction))
        num_neg = min(negative.numel(), self.batch_size_per_image - num_pos)
        perm1 = torch.randperm(positive.numel(), device=positive.device)[:num_pos]
        perm2 = torch.randperm(negative.numel(), device=negative.device)[:num_neg]
        return positive[perm1], negative[perm2]


rpn_head = nn.Sequential(nn.Linear(64, 64), nn.ReLU(), nn.Linear(64, 1)).to(device)
sampler = BalancedPositiveNegativeSampler(batch_size_per_image=256, positive_fraction=0.5)
opt = torch.optim.SGD(rpn_head.parameters(), lr=0.02, momentum=0.9)


def objectness_loss(anchor_feats, labels):
    objectness = rpn_head(anchor_feats).squeeze(-1)
    pos_idx, neg_idx = sampler(labels)
    sampled = torch.cat([pos_idx, neg_idx])
    return F.binary_cross_entropy_with_logits(objectness[sampled], labels[sampled].float())


train_loss = compile_fn(objectness_loss)
for it in range(4):
    ious = torch.rand(ANCHORS)
    labels = torch.full((ANCHORS,), -1)  # -1: between thresholds, ignored
    labels[ious < 0.3] = 0
    labels[ious >= 0.7] = 1
    loss = train_loss(torch.randn(ANCHORS, 64).to(device), labels.to(device))
    loss.backward()
    opt.step()
    opt.zero_grad()
    if torch_xla is not None:
        torch_xla.sync()
print(f"loss {loss.item():.4f}")
