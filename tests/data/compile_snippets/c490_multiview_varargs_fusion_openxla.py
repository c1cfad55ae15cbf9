"""`openxla` multi-camera perception: each sample arrives with however many camera views the
vehicle recorded (two to four), and the compiled fusion model takes them as `*views`, encodes each
with a shared CNN and averages the view features before the classifier."""
import random

import torch
import torch.nn as nn
import torch.nn.functional as F

try:
    import torch_xla.core.xla_model as xm
    BACKEND, device = "openxla", xm.xla_device()
except ImportError:  # CPU run without torch_xla
    xm, BACKEND, device = None, "eager", torch.device("cpu")

torch.manual_seed(0)
random.seed(0)


class MultiViewNet(nn.Module):
    def __init__(self, dim=32, classes=6):
        super().__init__()
        self.encoder = nn.Sequential(nn.Conv2d(3, dim, 5, stride=2), nn.ReLU(),
                                     nn.AdaptiveAvgPool2d(1))
        self.head = nn.Linear(dim, classes)

    def forward(self, *views):
        feats = [self.encoder(v).flatten(1) for v in views]
        return self.head(torch.stack(feats).mean(0))


model = MultiViewNet().to(device)
step_model = torch.compile(model, backend=BACKEND)
opt = torch.optim.SGD(model.parameters(), lr=0.05)
for step in range(8):
    n_views = random.choice((2, 3, 4))
    views = [torch.randn(4, 3, 32, 32, device=device) for _ in range(n_views)]
    labels = torch.randint(0, 6, (4,), device=device)
    loss = F.cross_entropy(step_model(*views), labels)
    loss.backward()
    opt.step()
    opt.zero_grad()
    if xm is not None:
        xm.mark_step()
print(f"loss {loss.item():.4f}")
