"""Gaudi (`hpu_backend`) linear probe on frozen features: the data pipeline runs the frozen
backbone under `torch.inference_mode()` to precompute features, and the trainable head's compiled
`forward` checks `if feats.is_inference():` and clones them, so that autograd may save them for
the backward pass."""
import torch
import torch.nn as nn
import torch.nn.functional as F

try:
    import habana_frameworks.torch.core as htcore
    BACKEND = "hpu_backend"
except ImportError:  # CPU run without the Gaudi software stack
    htcore, BACKEND = None, "eager"

torch.manual_seed(0)
backbone = nn.Sequential(nn.Conv2d(3, 32, 3, stride=2), nn.ReLU(), nn.AdaptiveAvgPool2d(1),
                         nn.Flatten()).eval()


class ProbeHead(nn.Module):
    def __init__(self, dim=32, classes=10):
        super().__init__()
        self.norm = nn.LayerNorm(dim)
        self.fc = nn.Linear(dim, classes)

    def forward(self, feats):
        if feats.is_inference():
            feats = feats.clone()
        return self.fc(self.norm(feats))


head = ProbeHead()
compiled = torch.compile(head, backend=BACKEND)
opt = torch.optim.SGD(head.parameters(), lr=0.1)
for it in range(4):
    images, labels = torch.randn(16, 3, 32, 32), torch.randint(0, 10, (16,))
    with torch.inference_mode():
        feats = backbone(images)
    loss = F.cross_entropy(compiled(feats), labels)
    loss.backward()
    opt.step()
    opt.zero_grad()
    if htcore is not None:
        htcore.mark_step()
print(f"loss {loss.item():.4f}")
