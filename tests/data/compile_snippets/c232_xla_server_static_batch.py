"""Batched inference server on an XLA device: waiting requests are grouped into a batch of
whatever size is queued, the batch dimension is marked static, and a compiled model scores it."""
import torch
import torch.nn as nn
import torch_xla
import torch_xla.core.xla_model as xm

torch.manual_seed(0)
device = xm.xla_device()


class Scorer(nn.Module):
    def __init__(self, dim=32):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(dim, 64), nn.GELU(), nn.LayerNorm(64), nn.Linear(64, 1))

    def forward(self, feats):
        return self.net(feats).squeeze(-1).sigmoid()


model = Scorer().to(device).eval()
score = torch_xla.compile(model)


def serve(queue):
    batch = torch.stack(queue).to(device)
    torch._dynamo.mark_static(batch, 0)
    with torch.no_grad():
        return score(batch).cpu()


queue_sizes = [3, 7, 1, 12, 5, 9, 2, 16, 4, 11]
results = [serve([torch.randn(32) for _ in range(n)]) for n in queue_sizes]
torch_xla.sync()
print("served", sum(len(r) for r in results), "requests")
