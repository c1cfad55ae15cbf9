"""A vision fine-tuning loop that mixes three image sources: decoded HWC arrays permuted to
NCHW without a copy, 20x20 images center-cropped to 16x16 by slicing, and ordinary contiguous
NCHW tensors; every batch goes straight into the compiled CNN."""
import torch
import torch.nn as nn

torch.manual_seed(0)


class SmallCNN(nn.Module):
    def __init__(self, classes=10):
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(3, 8, 3, padding=1), nn.ReLU(), nn.Conv2d(8, 16, 3, padding=1), nn.ReLU(),
            nn.AdaptiveAvgPool2d(1))
        self.fc = nn.Linear(16, classes)

    def forward(self, images):
        return self.fc(self.features(images).flatten(1))


def decoded_batch(n=4):
    hwc = torch.rand(n, 16, 16, 3)
    return hwc.permute(0, 3, 1, 2)


def center_crop_batch(n=4, size=16):
    full = torch.rand(n, 3, 20, 20)
    top = (full.shape[-1] - size) // 2
    return full[:, :, top:top + size, top:top + size]


def plain_batch(n=4):
    return torch.rand(n, 3, 16, 16)


sources = [decoded_batch, center_crop_batch, plain_batch]
model = SmallCNN()
cmodel = torch.compile(model)
opt = torch.optim.SGD(model.parameters(), lr=0.01)
for step in range(6):
    images = sources[step % 3]()
    loss = nn.functional.cross_entropy(cmodel(images), torch.randint(0, 10, (4,)))
    loss.backward()
    opt.step()
    opt.zero_grad()
print(float(loss))
