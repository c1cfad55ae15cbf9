# An anchor-free (FCOS/YOLO-style) detection loss. The compiled loss first checks with
# torch._assert that the ground-truth boxes are normalized to [0, 1], then computes an L1 box
# loss and a generalized-IoU loss on the matched predictions.
import torch
import torch.nn as nn

torch.manual_seed(0)


def generalized_iou(pred, target):
    lt = torch.max(pred[:, :2], target[:, :2])
    rb = torch.min(pred[:, 2:], target[:, 2:])
    inter = (rb - lt).clamp(min=0).prod(-1)
    area_p = (pred[:, 2:] - pred[:, :2]).prod(-1)
    area_t = (target[:, 2:] - target[:, :2]).prod(-1)
    union = area_p + area_t - inter
    hull = (torch.max(pred[:, 2:], target[:, 2:]) - torch.min(pred[:, :2], target[:, :2])).prod(-1)
    return inter / union - (hull - union) / hull


class BoxLoss(nn.Module):
    def __init__(self, l1_weight=5.0, giou_weight=2.0):
        super().__init__()
        self.l1_weight = l1_weight
        self.giou_weight = giou_weight

    def forward(self, pred_boxes, gt_boxes):
        torch._assert(((gt_boxes >= 0) & (gt_boxes <= 1)).all(), "boxes must be normalized xyxy")
        l1 = (pred_boxes - gt_boxes).abs().sum(-1).mean()
        giou = (1 - generalized_iou(pred_boxes, gt_boxes)).mean()
        return self.l1_weight * l1 + self.giou_weight * giou


def random_boxes(n):
    xy = torch.rand(n, 2) * 0.5
    return torch.cat([xy, xy + 0.1 + torch.rand(n, 2) * 0.4], dim=-1)


head = nn.Sequential(nn.Linear(64, 64), nn.ReLU(), nn.Linear(64, 4))
criterion = torch.compile(BoxLoss())
opt = torch.optim.AdamW(head.parameters(), lr=1e-3)
for step in range(4):
    features = torch.randn(16, 64)
    raw = head(features).sigmoid()
    pred_boxes = torch.cat([raw[:, :2] * 0.5, raw[:, :2] * 0.5 + 0.1 + raw[:, 2:] * 0.4], dim=-1)
    loss = criterion(pred_boxes, random_boxes(16))
    loss.backward()
    opt.step()
    opt.zero_grad()
print(loss.item())
