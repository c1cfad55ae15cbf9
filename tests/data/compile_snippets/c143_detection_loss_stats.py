"""Detection-style criterion: a classification term, a box regression term and an IoU term are
summed for the loss and also packed into one tensor for the logger, which reads it outside the
compiled step."""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


def box_iou_loss(pred, target):
    lt = torch.maximum(pred[:, :2], target[:, :2])
    rb = torch.minimum(pred[:, 2:], target[:, 2:])
    inter = (rb - lt).clamp(min=0).prod(-1)
    area = lambda b: (b[:, 2:] - b[:, :2]).clamp(min=0).prod(-1)
    return (1 - inter / (area(pred) + area(target) - inter + 1e-6)).mean()


class SetCriterion(nn.Module):
    def __init__(self, weights=(1.0, 5.0, 2.0)):
        super().__init__()
        self.weights = weights

    def forward(self, logits, boxes, tgt_cls, tgt_boxes):
        l_cls = F.cross_entropy(logits, tgt_cls)
        l_box = F.l1_loss(boxes, tgt_boxes)
        l_iou = box_iou_loss(boxes, tgt_boxes)
        terms = torch.tensor([l_cls, l_box, l_iou])
        total = self.weights[0] * l_cls + self.weights[1] * l_box + self.weights[2] * l_iou
        return total, terms


head = nn.Linear(16, 4 + 5)
criterion = SetCriterion()


@torch.compile
def train_step(feats, tgt_cls, tgt_boxes):
    out = head(feats)
    xy = out[:, 4:6].sigmoid()
    boxes = torch.cat([xy, xy + out[:, 6:8].sigmoid()], dim=-1)
    return criterion(out[:, :4], boxes, tgt_cls, tgt_boxes)


opt = torch.optim.SGD(head.parameters(), lr=0.05)
history = []
for step in range(5):
    xy = torch.rand(10, 2) * 0.5
    loss, terms = train_step(torch.randn(10, 16), torch.randint(0, 4, (10,)),
                             torch.cat([xy, xy + 0.3], dim=-1))
    loss.backward()
    opt.step()
    opt.zero_grad()
    history.append(terms)
print(torch.stack(history).mean(0))
