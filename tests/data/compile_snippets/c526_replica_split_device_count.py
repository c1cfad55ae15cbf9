"""Gaudi (`hpu_backend`) inference wrapper ported from a `DataParallel` setup: `forward` splits the
batch into one shard per visible accelerator, `torch.cuda.device_count()` (at least one), runs
the shared backbone on each shard and concatenates the logits."""
import torch
import torch.nn as nn

try:
    import habana_frameworks.torch.core as htcore
    BACKEND = "hpu_backend"
except ImportError:  # CPU run without the Gaudi software stack
    htcore, BACKEND = None, "eager"

torch.manual_seed(0)


class ShardedClassifier(nn.Module):
    def __init__(self, dim=40, classes=10):
        super().__init__()
        self.backbone = nn.Sequential(nn.Linear(dim, 128), nn.ReLU(), nn.Linear(128, 128), nn.ReLU())
        self.head = nn.Linear(128, classes)

    def forward(self, x):
        shards = x.chunk(max(1, torch.cuda.device_count()))
        return torch.cat([self.head(self.backbone(s)) for s in shards])


model = torch.compile(ShardedClassifier().eval(), backend=BACKEND)
with torch.no_grad():
    for batch in range(4):
        logits = model(torch.randn(32, 40))
        if htcore is not None:
            htcore.mark_step()
print(logits.argmax(-1)[:8].tolist())
