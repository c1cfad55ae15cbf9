"""An image-embedding predictor used by several callers: single images (C, H, W), batches
(N, C, H, W) and short clips (N, T, C, H, W) all go through the same compiled predict
function, which flattens the leading dimensions; XLA backend when torch_xla is present."""
import torch
import torch.nn as nn

try:
    import torch_xla  # noqa: F401
    BACKEND = "openxla"
except ImportError:
    BACKEND = "inductor"

torch.manual_seed(0)
backbone = nn.Sequential(nn.Conv2d(3, 8, 3, stride=2), nn.ReLU(), nn.AdaptiveAvgPool2d(1),
                         nn.Flatten(), nn.Linear(8, 16)).eval()


@torch.compile(backend=BACKEND)
def predict(images):
    lead = images.shape[:-3]
    emb = backbone(images.reshape(-1, *images.shape[-3:]))
    return nn.functional.normalize(emb, dim=-1).reshape(*lead, -1)


with torch.no_grad():
    single = predict(torch.randn(3, 16, 16))
    batch = predict(torch.randn(4, 3, 16, 16))
    clip = predict(torch.randn(2, 5, 3, 16, 16))
    batch2 = predict(torch.randn(6, 3, 16, 16))
print(single.shape, batch.shape, clip.shape, batch2.shape)
