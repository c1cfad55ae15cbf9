"""Gaudi (`hpu_backend`) multimodal classifier trained on a mix of text-only, text+image and
text+audio examples; the collate function always returns the same batch keys and sets the
modalities a batch does not have to `None`, and the compiled `forward` adds an image or audio
embedding only when `batch["pixel_values"]` or `batch["audio_features"]` is not `None`."""
import torch
import torch.nn as nn
import torch.nn.functional as F

try:
    import habana_frameworks.torch.core as htcore
    BACKEND = "hpu_backend"
except ImportError:  # CPU run without the Gaudi software stack
    htcore, BACKEND = None, "eager"

torch.manual_seed(0)
VOCAB, DIM, CLASSES = 500, 64, 5


class FusionClassifier(nn.Module):
    def __init__(self):
        super().__init__()
        self.text = nn.EmbeddingBag(VOCAB, DIM)
        self.image = nn.Sequential(nn.Conv2d(3, 16, 3, stride=2), nn.ReLU(), nn.AdaptiveAvgPool2d(1),
                                   nn.Flatten(), nn.Linear(16, DIM))
        self.audio = nn.Sequential(nn.Linear(40, DIM), nn.GELU())
        self.head = nn.Linear(DIM, CLASSES)

    def forward(self, batch):
        h = self.text(batch["input_ids"])
        if batch["pixel_values"] is not None:
            h = h + self.image(batch["pixel_values"])
        if batch["audio_features"] is not None:
            h = h + self.audio(batch["audio_features"]).mean(1)
        return self.head(h)


def collate(kind, n=8):
    return {"input_ids": torch.randint(0, VOCAB, (n, 12)),
            "pixel_values": torch.randn(n, 3, 32, 32) if kind == "image" else None,
            "audio_features": torch.randn(n, 20, 40) if kind == "audio" else None,
            "labels": torch.randint(0, CLASSES, (n,))}


model = FusionClassifier()
compiled = torch.compile(model, backend=BACKEND)
opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
for kind in ["text", "image", "audio", "text", "image", "audio"]:
    batch = collate(kind)
    loss = F.cross_entropy(compiled(batch), batch["labels"])
    loss.backward()
    opt.step()
    opt.zero_grad()
    if htcore is not None:
        htcore.mark_step()
print(f"loss {loss.item():.4f}")
