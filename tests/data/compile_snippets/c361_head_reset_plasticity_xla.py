"""Plasticity resets on XLA: every other epoch the trainer throws away the classifier head and
puts a freshly initialised one of the same size in its place (a primacy-bias style reset)."""
import torch
import torch.nn as nn
import torch.nn.functional as F
import torch_xla.core.xla_model as xm

torch.manual_seed(0)
device = xm.xla_device()
N_CLASSES = 10


class Classifier(nn.Module):
    def __init__(self, n_classes, dim=64):
        super().__init__()
        self.backbone = nn.Sequential(nn.Linear(32, dim), nn.ReLU(), nn.Linear(dim, dim), nn.ReLU())
        self.head = nn.Linear(dim, n_classes)

    def reset_head(self):
        self.head = nn.Linear(self.head.in_features, self.head.out_features).to(self.head.weight.device)

    def forward(self, x):
        return self.head(self.backbone(x))


def batches(steps=3, batch=16):
    for _ in range(steps):
        y = torch.randint(0, N_CLASSES, (batch,))
        yield torch.randn(batch, 32) + y[:, None].float(), y


model = Classifier(N_CLASSES).to(device)
compiled = torch.compile(model, backend="openxla")
for epoch in range(5):
    if epoch and epoch % 2 == 0:
        model.reset_head()
    opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    for x, y in batches():
        loss = F.cross_entropy(compiled(x.to(device)), y.to(device))
        loss.backward()
        opt.step()
        opt.zero_grad()
        xm.mark_step()
    print(f"epoch {epoch}: loss {loss.item():.3f}")
