"""Fine-tuning with a warm-started adapter: a forward pre-hook counts how many batches the adapter
has seen, and the adapter's contribution is ramped up linearly over the first batches so the
pretrained backbone is not disturbed early in training."""
import torch
import torch.nn as nn

torch.manual_seed(0)


def count_batches(module, args):
    module.batches_seen += 1


class AdaptedBlock(nn.Module):
    def __init__(self, dim=32, rank=4, ramp=20):
        super().__init__()
        self.backbone = nn.Linear(dim, dim)
        self.adapter = nn.Sequential(nn.Linear(dim, rank, bias=False), nn.Linear(rank, dim, bias=False))
        self.adapter.batches_seen = 0
        self.adapter.register_forward_pre_hook(count_batches)
        self.ramp = ramp

    def forward(self, x):
        delta = self.adapter(x)
        weight = min(1.0, self.adapter.batches_seen / self.ramp)
        return self.backbone(x) + weight * delta


block = AdaptedBlock()
for p in block.backbone.parameters():
    p.requires_grad_(False)
cblock = torch.compile(block)
opt = torch.optim.Adam(block.adapter.parameters(), lr=1e-3)
for step in range(12):
    loss = cblock(torch.randn(4, 32)).pow(2).mean()
    loss.backward()
    opt.step()
    opt.zero_grad()
print(f"loss {loss.item():.4f} after {block.adapter.batches_seen} batches")
