"""Class-balanced loss for an imbalanced image classifier, counted on the device: the compiled
loss re-weights the cross-entropy per batch from `F.one_hot(labels, NUM_CLASSES).sum(0)`, giving
each present class the inverse of its frequency and absent classes a weight of one."""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
NUM_CLASSES = 5


def batch_class_weights(labels):
    counts = F.one_hot(labels, NUM_CLASSES).sum(0).float()
    present = (counts > 0).sum()
    inverse = labels.numel() / (present * counts.clamp_min(1.0))
    return torch.where(counts > 0, inverse, torch.ones_like(counts))


model = nn.Sequential(nn.Flatten(), nn.Linear(3 * 8 * 8, 32), nn.ReLU(), nn.Linear(32, NUM_CLASSES))
opt = torch.optim.SGD(model.parameters(), lr=0.05)


@torch.compile
def balanced_loss(images, labels):
    logits = model(images)
    return F.cross_entropy(logits, labels, weight=batch_class_weights(labels))


for _ in range(3):
    labels = torch.multinomial(torch.tensor([0.6, 0.2, 0.1, 0.05, 0.05]), 16, replacement=True)
    loss = balanced_loss(torch.randn(16, 3, 8, 8), labels)
    loss.backward()
    opt.step()
    opt.zero_grad()
print(loss.item())
