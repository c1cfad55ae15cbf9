"""`openxla` segmentation service that resizes the predicted logits back to the image's original
size with `F.interpolate(logits, size=size)`; the size comes from three callers: the JSON request
handler passes the list it parsed (`[h, w]`), the tiling code a tuple and the batch evaluator
`images.shape[-2:]` (a `torch.Size`), all for the same 64x64 images."""
import json

import torch
import torch.nn as nn
import torch.nn.functional as F

try:
    import torch_xla.core.xla_model as xm
    BACKEND, device = "openxla", xm.xla_device()
except ImportError:  # CPU run without PyTorch/XLA
    xm, BACKEND, device = None, "eager", torch.device("cpu")

torch.manual_seed(0)
CLASSES = 6
net = nn.Sequential(nn.Conv2d(3, 16, 3, stride=2, padding=1), nn.ReLU(),
                    nn.Conv2d(16, 32, 3, stride=2, padding=1), nn.ReLU(),
                    nn.Conv2d(32, CLASSES, 1)).to(device).eval()


def segment(images, size):
    logits = F.interpolate(net(images), size=size, mode="bilinear", align_corners=False)
    return logits.argmax(1)


predict = torch.compile(segment, backend=BACKEND)
with torch.no_grad():
    request = json.loads('{"size": [64, 64]}')  # JSON request handler
    masks = predict(torch.randn(2, 3, 64, 64).to(device), request["size"])
    tile_size = (64, 64)  # tiling code
    masks = predict(torch.randn(2, 3, 64, 64).to(device), tile_size)
    images = torch.randn(2, 3, 64, 64).to(device)  # batch evaluator
    masks = predict(images, images.shape[-2:])
    if xm is not None:
        xm.mark_step()
print(tuple(masks.shape), masks.unique().numel())
