"""Fine-tune a classifier whose head adds Gaussian feature noise during warm-up.

The head counts the training batches it has seen and ramps the noise down linearly over the
first 20 of them; the whole model is compiled.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class NoisyHead(nn.Module):
    def __init__(self, dim, n_cls, warmup=20, sigma=0.5):
        super().__init__()
        self.fc = nn.Linear(dim, n_cls)
        self.warmup = warmup
        self.sigma = sigma
        self.seen = 0

    def noise_scale(self):
        if not self.training:
            return 0.0
        self.seen += 1
        return self.sigma * max(0.0, 1.0 - self.seen / self.warmup)

    def forward(self, feats):
        scale = self.noise_scale()
        return self.fc(feats + scale * torch.randn_like(feats))


class Classifier(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = nn.Sequential(nn.Linear(20, 64), nn.GELU(), nn.Linear(64, 64))
        self.head = NoisyHead(64, 4)

    def forward(self, x):
        return self.head(self.encoder(x))


model = Classifier()
cmodel = torch.compile(model)
opt = torch.optim.SGD(model.parameters(), lr=0.05)
for step in range(12):
    x, y = torch.randn(16, 20), torch.randint(0, 4, (16,))
    loss = F.cross_entropy(cmodel(x), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
print(float(loss))
