"""Online scoring handler for a click-through model: the server passes the request's list of
feature dicts (dense features, a categorical id, a request id) to a compiled `handle` that
batches them with `torch.utils.data.default_collate` and scores the batch."""
import torch
import torch.nn as nn
from torch.utils.data import default_collate

torch.manual_seed(0)


class CTRModel(nn.Module):
    def __init__(self, dense=13, cats=100, dim=16):
        super().__init__()
        self.embed = nn.Embedding(cats, dim)
        self.mlp = nn.Sequential(nn.Linear(dense + dim, 64), nn.ReLU(), nn.Linear(64, 1))

    def forward(self, dense, cat):
        return self.mlp(torch.cat([dense, self.embed(cat)], -1)).squeeze(-1)


model = CTRModel().eval()


@torch.compile
def handle(samples):
    batch = default_collate(samples)
    return torch.sigmoid(model(batch["dense"], batch["cat"]))


with torch.no_grad():
    for request in range(4):
        samples = [{"dense": torch.randn(13), "cat": torch.tensor(i * 7 % 100), "request_id": request}
                   for i in range(8)]
        scores = handle(samples)
        print(request, [round(s, 3) for s in scores.tolist()[:3]])
