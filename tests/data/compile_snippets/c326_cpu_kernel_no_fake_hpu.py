"""Gaudi training of a box-regression head with a hand-written IoU kernel: the project
registers its own operator through torch.library (a schema and a CPU implementation), and
the compiled loss module calls it through torch.ops."""
import torch
import torch.nn as nn
import habana_frameworks.torch.core as htcore

torch.manual_seed(0)

_lib = torch.library.Library("boxops", "DEF")
_lib.define("pair_iou(Tensor a, Tensor b) -> Tensor")


def _pair_iou_cpu(a, b):
    lt = torch.maximum(a[:, :2], b[:, :2])
    rb = torch.minimum(a[:, 2:], b[:, 2:])
    inter = (rb - lt).clamp(min=0).prod(-1)
    area_a = (a[:, 2:] - a[:, :2]).prod(-1)
    area_b = (b[:, 2:] - b[:, :2]).prod(-1)
    return inter / (area_a + area_b - inter)


_lib.impl("pair_iou", _pair_iou_cpu, "CPU")


class IoULoss(nn.Module):
    def forward(self, pred, target):
        iou = torch.ops.boxops.pair_iou(pred, target)
        return (1.0 - iou).mean()


class BoxHead(nn.Module):
    def __init__(self, dim=32):
        super().__init__()
        self.reg = nn.Linear(dim, 4)
        self.loss = IoULoss()

    def forward(self, feats, target):
        d = self.reg(feats).exp()
        xy = target[:, :2]
        pred = torch.cat([xy, xy + d[:, 2:]], -1)
        return self.loss(pred, target)


head = BoxHead()
compiled = torch.compile(head, backend="hpu_backend")
opt = torch.optim.SGD(head.parameters(), lr=0.01)
for _ in range(4):
    xy = torch.rand(8, 2)
    target = torch.cat([xy, xy + torch.rand(8, 2) + 0.1], -1)
    loss = compiled(torch.randn(8, 32), target)
    loss.backward()
    opt.step()
    opt.zero_grad()
    htcore.mark_step()
print(loss)
