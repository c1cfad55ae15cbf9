"""Random-resized-crop augmentation moved onto the accelerator: the host draws the crop box with
Python's `random` (top, left and side length, ints that change every batch) and the compiled
augmentation slices the batch to that box and resizes it back to the training resolution with
`F.interpolate(size=...)` before a horizontal flip."""
import random

import torch
import torch.nn.functional as F

random.seed(0)
torch.manual_seed(0)
OUT = 24


@torch.compile
def crop_and_resize(images, top, left, side, flip):
    crop = images[:, :, top:top + side, left:left + side]
    crop = F.interpolate(crop, size=(OUT, OUT), mode="bilinear", align_corners=False)
    return crop.flip(-1) if flip else crop


for _ in range(6):
    images = torch.rand(4, 3, 32, 32)
    side = random.randint(16, 32)
    top, left = random.randint(0, 32 - side), random.randint(0, 32 - side)
    batch = crop_and_resize(images, top, left, side, True)
print(batch.shape)
