"""`torch_xla.compile` unsupervised domain adaptation with a weighted CORAL loss: the source batch's
features are importance-weighted by a domain classifier's odds, and the compiled loss matches the
weighted source covariance, `torch.cov(f.T, aweights=w)`, to the target covariance."""
import torch
import torch.nn as nn
import torch.nn.functional as F

try:
    import torch_xla
    xla_compile, device = torch_xla.compile, torch_xla.device()
except ImportError:  # CPU run without torch_xla
    torch_xla, xla_compile, device = None, torch.compile, torch.device("cpu")

torch.manual_seed(0)
features = nn.Sequential(nn.Linear(30, 64), nn.ReLU(), nn.Linear(64, 16)).to(device)
classifier = nn.Linear(16, 5).to(device)
domain_clf = nn.Linear(30, 1).to(device)


def coral_step(src, src_y, tgt, coral_weight=0.5):
    fs, ft = features(src), features(tgt)
    with torch.no_grad():
        w = torch.sigmoid(domain_clf(src)).squeeze(-1)
        w = w / (1 - w + 1e-6)
    cov_s = torch.cov(fs.T, aweights=w)
    cov_t = torch.cov(ft.T)
    coral = (cov_s - cov_t).pow(2).sum() / (4 * fs.shape[1] ** 2)
    return F.cross_entropy(classifier(fs), src_y) + coral_weight * coral


step = xla_compile(coral_step)
params = list(features.parameters()) + list(classifier.parameters())
opt = torch.optim.SGD(params, lr=0.01, momentum=0.9)
for it in range(4):
    src = torch.randn(32, 30, device=device)
    tgt = torch.randn(32, 30, device=device) + 0.5
    loss = step(src, torch.randint(0, 5, (32,), device=device), tgt)
    loss.backward()
    opt.step()
    opt.zero_grad()
    if torch_xla is not None:
        torch_xla.sync()
print(f"loss {loss.item():.4f}")
