"""Classifier-free guidance in a small conditional denoiser: `forward` runs the unconditional pass
inside a `DropCondition` context manager (a class with `__enter__`/`__exit__`) that switches the
model's `use_condition` flag off and restores it on exit, then mixes the two predictions with the
guidance scale."""
import torch
import torch.nn as nn

torch.manual_seed(0)


class DropCondition:
    def __init__(self, model):
        self.model = model

    def __enter__(self):
        self.saved = self.model.use_condition
        self.model.use_condition = False
        return self.model

    def __exit__(self, exc_type, exc, tb):
        self.model.use_condition = self.saved
        return False


class Denoiser(nn.Module):
    def __init__(self, dim=16, classes=10):
        super().__init__()
        self.label_embed = nn.Embedding(classes, dim)
        self.net = nn.Sequential(nn.Linear(dim, 64), nn.SiLU(), nn.Linear(64, dim))
        self.use_condition = True

    def predict(self, x, labels):
        h = x + self.label_embed(labels) if self.use_condition else x
        return self.net(h)

    def forward(self, x, labels, guidance_scale=3.0):
        cond = self.predict(x, labels)
        with DropCondition(self):
            uncond = self.predict(x, labels)
        return uncond + guidance_scale * (cond - uncond)


model = Denoiser().eval()
sample_step = torch.compile(model)
x = torch.randn(8, 16)
labels = torch.randint(0, 10, (8,))
with torch.no_grad():
    for step in range(5):
        x = x - 0.1 * sample_step(x, labels)
print(x.norm().item())
