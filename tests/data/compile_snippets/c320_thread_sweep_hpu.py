"""A CPU-side throughput check before deploying a Gaudi classifier: the benchmark loads the
compiled model once and measures it with 1, 2 and 4 intra-op threads, setting the thread
count through a small helper before each sweep point."""
import time

import torch
import torch.nn as nn
import habana_frameworks.torch.core as htcore

torch.manual_seed(0)


class Classifier(nn.Module):
    def __init__(self, dim=64, n_cls=10):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(dim, 128), nn.ReLU(), nn.Linear(128, 128), nn.ReLU())
        self.head = nn.Linear(128, n_cls)

    def forward(self, x):
        return self.head(self.body(x))


def use_threads(n):
    torch.set_num_threads(n)


model = torch.compile(Classifier().eval(), backend="hpu_backend")
batch = torch.randn(32, 64)
results = {}
with torch.no_grad():
    for n in (1, 2, 4):
        use_threads(n)
        start = time.perf_counter()
        for _ in range(3):
            out = model(batch)
            htcore.mark_step()
        results[n] = (time.perf_counter() - start) / 3
print({n: round(t * 1e3, 3) for n, t in results.items()})
