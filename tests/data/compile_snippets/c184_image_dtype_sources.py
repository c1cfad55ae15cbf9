"""Gaudi inference pipeline that mixes image sources: freshly decoded JPEGs arrive as uint8,
a cached preprocessed shard is stored in float16, and synthetic augmentations come in float32;
one compiled normalization function feeds all of them to the classifier."""
import torch
import torch.nn as nn
import habana_frameworks.torch.core as htcore

torch.manual_seed(0)

MEAN = torch.tensor([0.485, 0.456, 0.406]).view(1, 3, 1, 1)
STD = torch.tensor([0.229, 0.224, 0.225]).view(1, 3, 1, 1)


def normalize(images):
    x = images.float()
    if images.dtype == torch.uint8:
        x = x / 255.0
    return (x - MEAN) / STD


cnormalize = torch.compile(normalize, backend="hpu_backend")
classifier = nn.Sequential(nn.Conv2d(3, 8, 3), nn.ReLU(), nn.AdaptiveAvgPool2d(1), nn.Flatten(),
                           nn.Linear(8, 4)).eval()

sources = [
    lambda: torch.randint(0, 256, (2, 3, 24, 24), dtype=torch.uint8),
    lambda: torch.rand(2, 3, 24, 24).half(),
    lambda: torch.rand(2, 3, 24, 24),
]
with torch.no_grad():
    for round_ in range(2):
        for load in sources:
            preds = classifier(cnormalize(load())).argmax(dim=-1)
            htcore.mark_step()
print(preds)
