# Training with an online linear probe: at the start of every epoch a callback attaches a
# forward hook to the backbone's last block that stashes its pooled features, and the probe is
# fitted on them after each step.
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class Backbone(nn.Module):
    def __init__(self, dim=32, depth=3):
        super().__init__()
        self.stem = nn.Linear(20, dim)
        self.blocks = nn.ModuleList(nn.Sequential(nn.LayerNorm(dim), nn.Linear(dim, dim), nn.GELU()) for _ in range(depth))
        self.head = nn.Linear(dim, 5)

    def forward(self, x):
        h = self.stem(x)
        for block in self.blocks:
            h = h + block(h)
        return self.head(h.mean(dim=1))


class ProbeCallback:
    def __init__(self, module, n_classes):
        self.module = module
        self.features = []
        self.probe = nn.Linear(32, n_classes)
        self.opt = torch.optim.SGD(self.probe.parameters(), lr=0.1)

    def on_epoch_start(self):
        self.features.clear()
        self.module.register_forward_hook(self.stash)

    def stash(self, module, inputs, output):
        self.features.append(output.detach().mean(dim=1))

    def on_step_end(self, labels):
        loss = F.cross_entropy(self.probe(self.features[-1]), labels)
        loss.backward()
        self.opt.step()
        self.opt.zero_grad()


model = Backbone()
compiled = torch.compile(model)
opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
probe = ProbeCallback(model.blocks[-1], n_classes=3)
for epoch in range(8):
    probe.on_epoch_start()
    for step in range(2):
        x = torch.randn(4, 6, 20)
        labels = torch.randint(0, 5, (4,))
        loss = F.cross_entropy(compiled(x), labels)
        loss.backward()
        opt.step()
        opt.zero_grad()
        probe.on_step_end(labels % 3)
print(loss.item(), len(probe.features))
