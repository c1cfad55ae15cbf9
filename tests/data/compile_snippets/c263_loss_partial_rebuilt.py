"""A detection fine-tuning loop whose trainer rebuilds its loss callables from the config at
every step (functools.partial of Smooth-L1 with the configured beta and of cross-entropy with
label smoothing) and hands them to the compiled step."""
import functools
from dataclasses import dataclass

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


@dataclass
class LossConfig:
    beta: float = 0.11
    label_smoothing: float = 0.1


def build_losses(cfg):
    return {
        "box": functools.partial(F.smooth_l1_loss, beta=cfg.beta),
        "cls": functools.partial(F.cross_entropy, label_smoothing=cfg.label_smoothing),
    }


class Head(nn.Module):
    def __init__(self, dim=32, classes=6):
        super().__init__()
        self.box = nn.Linear(dim, 4)
        self.cls = nn.Linear(dim, classes)

    def forward(self, feats):
        return self.box(feats), self.cls(feats)


head = Head()
opt = torch.optim.SGD(head.parameters(), lr=0.01)


@torch.compile
def train_step(feats, boxes, labels, losses):
    pred_box, logits = head(feats)
    return losses["box"](pred_box, boxes) + losses["cls"](logits, labels)


cfg = LossConfig()
for _ in range(5):
    loss = train_step(torch.randn(8, 32), torch.randn(8, 4), torch.randint(0, 6, (8,)),
                      build_losses(cfg))
    loss.backward()
    opt.step()
    opt.zero_grad()
print(float(loss))
