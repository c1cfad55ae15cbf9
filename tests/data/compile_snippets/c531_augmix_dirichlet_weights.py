"""Gaudi (`hpu_backend`) AugMix-style consistency training: the compiled step builds three
augmentation chains (flip, brightness, noise), mixes them with weights drawn from
`torch.distributions.Dirichlet`, blends with the original using a `Beta` draw and adds the
Jensen-Shannon consistency term to the cross-entropy."""
import torch
import torch.nn as nn
import torch.nn.functional as F

try:
    import habana_frameworks.torch.core as htcore
    BACKEND = "hpu_backend"
except ImportError:  # CPU run without the Gaudi software stack
    htcore, BACKEND = None, "eager"

torch.manual_seed(0)
model = nn.Sequential(nn.Conv2d(3, 16, 3, padding=1), nn.ReLU(), nn.AdaptiveAvgPool2d(1),
                      nn.Flatten(), nn.Linear(16, 10))
mix_dist = torch.distributions.Dirichlet(torch.ones(3))
blend_dist = torch.distributions.Beta(torch.tensor(1.0), torch.tensor(1.0))


def augmix(x):
    chains = torch.stack([x.flip(-1), (x * 1.3).clamp(-3, 3), x + 0.1 * torch.randn_like(x)])
    w = mix_dist.sample()
    mixed = (w.view(3, 1, 1, 1, 1) * chains).sum(0)
    m = blend_dist.sample()
    return m * x + (1 - m) * mixed


def train_step(x, y):
    logits = model(torch.cat([x, augmix(x), augmix(x)]))
    clean, aug1, aug2 = logits.chunk(3)
    p = [F.softmax(t, dim=-1) for t in (clean, aug1, aug2)]
    mean = torch.clamp(sum(p) / 3, 1e-7, 1).log()
    js = sum(F.kl_div(mean, q, reduction="batchmean") for q in p) / 3
    return F.cross_entropy(clean, y) + 12 * js


step = torch.compile(train_step, backend=BACKEND)
opt = torch.optim.SGD(model.parameters(), lr=0.05)
for it in range(4):
    x, y = torch.randn(8, 3, 32, 32), torch.randint(0, 10, (8,))
    loss = step(x, y)
    loss.backward()
    opt.step()
    opt.zero_grad()
    if htcore is not None:
        htcore.mark_step()
print(f"loss {loss.item():.4f}")
