# Mixup for an image classifier: the compiled training step draws the mixing coefficient from a
# torch.distributions.Beta(alpha, alpha) made once, mixes the batch with a shuffled copy of
# itself and mixes the two cross-entropy losses with the same coefficient.
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class SmallCNN(nn.Module):
    def __init__(self, n_classes=10):
        super().__init__()
        self.features = nn.Sequential(nn.Conv2d(3, 16, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2), nn.Conv2d(16, 32, 3, padding=1), nn.ReLU())
        self.fc = nn.Linear(32, n_classes)

    def forward(self, x):
        return self.fc(self.features(x).mean(dim=(2, 3)))


class MixupLoss(nn.Module):
    def __init__(self, alpha=0.4):
        super().__init__()
        self.beta = torch.distributions.Beta(torch.tensor(alpha), torch.tensor(alpha))

    def forward(self, model, images, labels):
        lam = self.beta.sample()
        perm = torch.randperm(images.shape[0])
        mixed = lam * images + (1 - lam) * images[perm]
        logits = model(mixed)
        return lam * F.cross_entropy(logits, labels) + (1 - lam) * F.cross_entropy(logits, labels[perm])


model = SmallCNN()
mixup = MixupLoss()


@torch.compile
def train_step(images, labels):
    return mixup(model, images, labels)


opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
for step in range(4):
    images = torch.randn(8, 3, 16, 16)
    labels = torch.randint(0, 10, (8,))
    loss = train_step(images, labels)
    loss.backward()
    opt.step()
    opt.zero_grad()
print(loss.item())
