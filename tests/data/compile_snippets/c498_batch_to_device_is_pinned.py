"""Gaudi (`hpu_backend`) inference server: the model's `forward` moves an incoming batch to the
model's device itself, asynchronously when the loader handed it a pinned tensor
(`if features.is_pinned():`), so callers can pass host tensors straight in."""
import torch
import torch.nn as nn

try:
    import habana_frameworks.torch.core as htcore
    BACKEND = "hpu_backend"
except ImportError:  # CPU run without the Gaudi software stack
    htcore, BACKEND = None, "eager"
device = torch.device("hpu" if hasattr(torch, "hpu") and torch.hpu.is_available() else "cpu")

torch.manual_seed(0)


class Recommender(nn.Module):
    def __init__(self, feats=48, hidden=128, items=20):
        super().__init__()
        self.tower = nn.Sequential(nn.Linear(feats, hidden), nn.ReLU(), nn.Linear(hidden, items))

    def forward(self, features):
        if features.is_pinned():
            features = features.to(device, non_blocking=True)
        else:
            features = features.to(device)
        return self.tower(features).softmax(-1)


model = Recommender().to(device).eval()
serve = torch.compile(model, backend=BACKEND)
with torch.no_grad():
    for request in range(5):
        probs = serve(torch.randn(16, 48))
        if htcore is not None:
            htcore.mark_step()
print(probs.argmax(-1).tolist())
