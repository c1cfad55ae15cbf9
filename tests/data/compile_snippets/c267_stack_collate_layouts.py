"""A vision fine-tuning loop whose samples come from mixed sources (HWC decodes permuted to CHW,
20x20 images center-cropped to 16x16 by slicing, plain tensors); a collate function stacks the
per-sample CHW images into one batch before the compiled CNN sees it."""
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


def load_sample(i):
    if i % 3 == 0:
        return torch.rand(16, 16, 3).permute(2, 0, 1)
    if i % 3 == 1:
        return torch.rand(3, 20, 20)[:, 2:18, 2:18]
    return torch.rand(3, 16, 16)


def collate(samples):
    images = torch.stack([img for img, _ in samples])
    labels = torch.tensor([label for _, label in samples])
    return images, labels


model = SmallCNN()
cmodel = torch.compile(model)
opt = torch.optim.SGD(model.parameters(), lr=0.01)
for step in range(6):
    images, labels = collate([(load_sample(step + j), j % 10) for j in range(4)])
    loss = nn.functional.cross_entropy(cmodel(images), labels)
    loss.backward()
    opt.step()
    opt.zero_grad()
print(float(loss))
