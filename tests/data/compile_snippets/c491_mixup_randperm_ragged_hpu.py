"""Gaudi (`hpu_backend`) image classification with mixup inside the compiled training loss: the
partner of each sample comes from `torch.randperm(images.shape[0])`, the mixing weight is drawn
from a `Beta(0.4, 0.4)` per batch, and the loader keeps its short last batch (`drop_last=False`)."""
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset

try:
    import habana_frameworks.torch.core as htcore
    BACKEND = "hpu_backend"
except ImportError:  # CPU run without the Gaudi stack
    htcore = None
    BACKEND = "eager"

torch.manual_seed(0)


class SmallCNN(nn.Module):
    def __init__(self, classes=10):
        super().__init__()
        self.features = nn.Sequential(nn.Conv2d(3, 16, 3, padding=1), nn.ReLU(),
                                      nn.AdaptiveAvgPool2d(1))
        self.fc = nn.Linear(16, classes)

    def forward(self, x):
        return self.fc(self.features(x).flatten(1))


model = SmallCNN()


def mixup_loss(images, labels, lam):
    perm = torch.randperm(images.shape[0], device=images.device)
    mixed = lam * images + (1 - lam) * images[perm]
    logits = model(mixed)
    return lam * F.cross_entropy(logits, labels) + (1 - lam) * F.cross_entropy(logits, labels[perm])


loss_fn = torch.compile(mixup_loss, backend=BACKEND)
opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
beta = torch.distributions.Beta(torch.tensor(0.4), torch.tensor(0.4))
data = TensorDataset(torch.randn(100, 3, 16, 16), torch.randint(0, 10, (100,)))
loader = DataLoader(data, batch_size=32, shuffle=True, drop_last=False)
for epoch in range(2):
    for images, labels in loader:
        loss = loss_fn(images, labels, beta.sample())
        loss.backward()
        opt.step()
        opt.zero_grad()
        if htcore is not None:
            htcore.mark_step()
    print(epoch, f"loss {loss.item():.4f}")
