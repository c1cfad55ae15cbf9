"""Box-regression fine-tuning on an XLA device where the Smooth-L1 transition point beta is
annealed per epoch: a helper builds the loss with functools.partial and the compiled train step
takes the loss function as an argument."""
import functools

import torch
import torch.nn as nn
import torch.nn.functional as F
import torch_xla.core.xla_model as xm

torch.manual_seed(0)


class BoxHead(nn.Module):
    def __init__(self, dim=32):
        super().__init__()
        self.mlp = nn.Sequential(nn.Linear(dim, 64), nn.ReLU(), nn.Linear(64, 4))

    def forward(self, feats):
        return self.mlp(feats)


def make_box_loss(epoch, start=1.0, decay=0.5):
    return functools.partial(F.smooth_l1_loss, beta=start * decay ** epoch)


head = BoxHead()
opt = torch.optim.SGD(head.parameters(), lr=0.01)


@torch.compile(backend="openxla")
def train_step(feats, target, loss_fn):
    return loss_fn(head(feats), target)


for epoch in range(4):
    box_loss = make_box_loss(epoch)
    for _ in range(2):
        loss = train_step(torch.randn(8, 32), torch.randn(8, 4), box_loss)
        loss.backward()
        opt.step()
        opt.zero_grad()
        xm.mark_step()
print(float(loss))
