"""Multimodal fusion where the set of modalities depends on the dataset: a learned per-channel scale
for each modality is created the first time that modality shows up in a batch, inside forward, and
registered in an nn.ParameterDict."""
import torch
import torch.nn as nn

torch.manual_seed(0)


class LateFusion(nn.Module):
    def __init__(self, dim=32, n_classes=5):
        super().__init__()
        self.scales = nn.ParameterDict()
        self.proj = nn.ModuleDict({"audio": nn.Linear(12, dim), "video": nn.Linear(20, dim),
                                   "text": nn.Linear(16, dim)})
        self.head = nn.Linear(dim, n_classes)

    def modality_scale(self, name, dim):
        if name not in self.scales:
            self.scales[name] = nn.Parameter(torch.ones(dim))
        return self.scales[name]

    def forward(self, features):
        fused = 0
        for name, x in features.items():
            h = self.proj[name](x)
            fused = fused + h * self.modality_scale(name, h.shape[-1])
        return self.head(fused / len(features))


model = LateFusion()
cmodel = torch.compile(model)
for _ in range(4):
    batch = {"audio": torch.randn(4, 12), "video": torch.randn(4, 20), "text": torch.randn(4, 16)}
    logits = cmodel(batch)
    logits.logsumexp(-1).mean().backward()
print(logits.shape, sorted(model.scales))
