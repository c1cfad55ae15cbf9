"""Image classifier fine-tuning on Gaudi with a hand-written label-smoothing loss: the targets are
turned into smoothed one-hot distributions by a small helper shared with the evaluation code."""
import torch
import torch.nn as nn
import torch.nn.functional as F
import habana_frameworks.torch.core as htcore

torch.manual_seed(0)


def smooth_one_hot(targets, smoothing=0.1):
    one_hot = F.one_hot(targets).float()
    num_classes = one_hot.shape[-1]
    return one_hot * (1.0 - smoothing) + smoothing / num_classes


class SmoothedCE(nn.Module):
    def __init__(self, smoothing=0.1):
        super().__init__()
        self.smoothing = smoothing

    def forward(self, logits, targets):
        soft = smooth_one_hot(targets, self.smoothing)
        return -(soft * logits.log_softmax(dim=-1)).sum(dim=-1).mean()


model = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.ReLU(), nn.AdaptiveAvgPool2d(1),
                      nn.Flatten(), nn.Linear(8, 10))
criterion = SmoothedCE()
opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)


def train_step(images, labels):
    return criterion(model(images), labels)


ctrain_step = torch.compile(train_step, backend="hpu_backend")
for step in range(4):
    images = torch.randn(10, 3, 16, 16)
    labels = torch.randperm(10)  # class-balanced batches: every class once
    loss = ctrain_step(images, labels)
    loss.backward()
    htcore.mark_step()
    opt.step()
    opt.zero_grad()
    htcore.mark_step()
print(f"loss {loss.item():.4f}")
