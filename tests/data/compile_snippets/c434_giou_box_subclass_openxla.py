"""XLA fine-tuning of a box head whose ground truth arrives as a `BoxTensor` (a plain
`torch.Tensor` subclass the annotation loader uses to mark x1, y1, x2, y2 boxes); the compiled
loss is the usual generalized-IoU loss, one minus the GIoU of each pair."""
import torch
import torch.nn as nn

try:
    import torch_xla.core.xla_model as xm
    device, BACKEND = xm.xla_device(), "openxla"
except ImportError:
    xm, device, BACKEND = None, torch.device("cpu"), "eager"


class BoxTensor(torch.Tensor):
    """(N, 4) boxes in x1, y1, x2, y2 order."""


torch.manual_seed(0)
head = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 4)).to(device)
opt = torch.optim.SGD(head.parameters(), lr=0.01)


@torch.compile(backend=BACKEND)
def giou_loss(pred, target):
    pred = torch.cat([pred[:, :2], pred[:, :2] + pred[:, 2:].exp()], -1)
    lt, rb = torch.max(pred[:, :2], target[:, :2]), torch.min(pred[:, 2:], target[:, 2:])
    inter = (rb - lt).clamp(min=0).prod(-1)
    area = lambda b: (b[:, 2:] - b[:, :2]).prod(-1)
    union = area(pred) + area(target) - inter
    hull = (torch.max(pred[:, 2:], target[:, 2:]) - torch.min(pred[:, :2], target[:, :2])).prod(-1)
    giou = inter / union - (hull - union) / hull
    return (1 - giou).mean()


for step in range(5):
    xy = torch.rand(8, 2)
    target = torch.cat([xy, xy + 0.2 + torch.rand(8, 2)], -1).as_subclass(BoxTensor).to(device)
    loss = giou_loss(head(torch.randn(8, 16, device=device)), target)
    loss.backward()
    opt.step()
    opt.zero_grad()
    if xm is not None:
        xm.mark_step()
print(f"loss {loss.item():.4f}")
