"""`openxla` data-parallel-style training of a small CNN with per-host metrics: the compiled step
stores its loss in a metrics table under a `host_tag()` (host name and rank, from
`socket.gethostname()` and the `RANK` variable) so the collector can tell workers apart."""
import os
import socket

import torch
import torch.nn as nn
import torch.nn.functional as F

try:
    import torch_xla.core.xla_model as xm
    BACKEND, device = "openxla", xm.xla_device()
except ImportError:  # CPU run without torch_xla
    xm, BACKEND, device = None, "eager", torch.device("cpu")

torch.manual_seed(0)
METRICS = {}


def host_tag():
    return f"{socket.gethostname()}/rank{os.environ.get('RANK', '0')}"


model = nn.Sequential(nn.Conv2d(1, 8, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                      nn.Flatten(), nn.Linear(8 * 14 * 14, 10)).to(device)


@torch.compile(backend=BACKEND)
def train_loss(images, labels):
    loss = F.cross_entropy(model(images), labels)
    METRICS[host_tag()] = loss.detach()
    return loss


opt = torch.optim.SGD(model.parameters(), lr=0.05)
for step in range(4):
    images = torch.randn(16, 1, 28, 28, device=device)
    labels = torch.randint(0, 10, (16,), device=device)
    loss = train_loss(images, labels)
    loss.backward()
    opt.step()
    opt.zero_grad()
    if xm is not None:
        xm.mark_step()
print({k: round(v.item(), 4) for k, v in METRICS.items()})
