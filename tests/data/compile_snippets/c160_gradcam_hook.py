"""Grad-CAM for a small CNN: the compiled forward keeps the last feature map and registers
a hook on it to remember its gradient; after backward the class-activation map is built
from the saved activations and gradients."""
import torch
import torch.nn as nn

torch.manual_seed(0)
saved = {}


def remember(name):
    def hook(grad):
        saved[name] = grad
    return hook


class CNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.features = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.ReLU(),
                                      nn.Conv2d(8, 16, 3, padding=1), nn.ReLU())
        self.fc = nn.Linear(16, 10)

    def forward(self, x):
        fmap = self.features(x)
        saved["act"] = fmap.detach()
        fmap.register_hook(remember("grad"))
        return self.fc(fmap.mean((2, 3)))


model = torch.compile(CNN())
for _ in range(3):
    logits = model(torch.randn(1, 3, 16, 16))
    logits[0, logits.argmax()].backward()
    weights = saved["grad"].mean((2, 3), keepdim=True)
    cam = (weights * saved["act"]).sum(1).relu()
print(cam.shape)
