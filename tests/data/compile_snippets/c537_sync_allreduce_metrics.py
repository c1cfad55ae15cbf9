"""Data-parallel SimCLR-style training (a gloo group of one process here) that averages the logged
loss and accuracy across ranks: the compiled step computes the weight penalty, then averages the
stacked statistics with a blocking `dist.all_reduce(stats)` and divides by the world size."""
import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F

dist.init_process_group("gloo", store=dist.HashStore(), rank=0, world_size=1)
torch.manual_seed(0)
encoder = nn.Sequential(nn.Linear(32, 64), nn.ReLU(), nn.Linear(64, 16))


def train_step(view1, view2, temperature=0.1):
    z1 = F.normalize(encoder(view1), dim=-1)
    z2 = F.normalize(encoder(view2), dim=-1)
    logits = z1 @ z2.T / temperature
    labels = torch.arange(z1.shape[0])
    loss = (F.cross_entropy(logits, labels) + F.cross_entropy(logits.T, labels)) / 2
    stats = torch.stack([loss.detach(), (logits.argmax(-1) == labels).float().mean()])
    reg = 1e-4 * sum(p.pow(2).sum() for p in encoder.parameters())
    dist.all_reduce(stats)
    return loss + reg, stats / dist.get_world_size()


step = torch.compile(train_step)
opt = torch.optim.SGD(encoder.parameters(), lr=0.1)
for it in range(4):
    x = torch.randn(16, 32)
    loss, stats = step(x + 0.1 * torch.randn_like(x), x + 0.1 * torch.randn_like(x))
    loss.backward()
    opt.step()
    opt.zero_grad()
print(f"loss {stats[0].item():.4f} acc {stats[1].item():.3f}")
dist.destroy_process_group()
