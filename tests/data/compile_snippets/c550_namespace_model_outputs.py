"""A research code base's image classifier whose `forward` returns its results as a
`types.SimpleNamespace(logits=..., features=..., loss=...)` so that the training loop and the
feature-extraction script can read them by attribute; the model is compiled whole and trained with
label smoothing."""
import types

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class SmallConvNet(nn.Module):
    def __init__(self, classes=10):
        super().__init__()
        self.features = nn.Sequential(nn.Conv2d(3, 32, 3, padding=1), nn.BatchNorm2d(32), nn.ReLU(),
                                      nn.MaxPool2d(2), nn.Conv2d(32, 64, 3, padding=1), nn.ReLU(),
                                      nn.AdaptiveAvgPool2d(1), nn.Flatten())
        self.classifier = nn.Linear(64, classes)

    def forward(self, images, labels=None):
        feats = self.features(images)
        logits = self.classifier(feats)
        loss = None if labels is None else F.cross_entropy(logits, labels, label_smoothing=0.1)
        return types.SimpleNamespace(logits=logits, features=feats, loss=loss)


model = SmallConvNet()
compiled = torch.compile(model)
opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
for it in range(4):
    images, labels = torch.randn(16, 3, 32, 32), torch.randint(0, 10, (16,))
    out = compiled(images, labels)
    out.loss.backward()
    opt.step()
    opt.zero_grad()
print(f"loss {out.loss.item():.4f} features {tuple(out.features.shape)}")
