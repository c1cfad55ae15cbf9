"""YOLOX-style detector training whose box loss adds an extra L1 term on the raw box offsets for the
last epochs, when the strong augmentation is switched off: as in YOLOX, the trainer sets a
`use_l1` flag on the compiled loss module once, at the epoch the L1 term starts."""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
MAX_EPOCH, NO_AUG_EPOCHS = 6, 2


def iou_loss(pred, target):
    lt = torch.max(pred[:, :2] - pred[:, 2:] / 2, target[:, :2] - target[:, 2:] / 2)
    rb = torch.min(pred[:, :2] + pred[:, 2:] / 2, target[:, :2] + target[:, 2:] / 2)
    inter = (rb - lt).clamp(min=0).prod(1)
    union = pred[:, 2:].prod(1) + target[:, 2:].prod(1) - inter
    return 1 - (inter / (union + 1e-16)) ** 2


class BoxLoss(nn.Module):
    def __init__(self):
        super().__init__()
        self.use_l1 = False

    def forward(self, reg_output, target_boxes):
        boxes = torch.cat([reg_output[:, :2], reg_output[:, 2:].exp()], dim=1)
        loss = 5.0 * iou_loss(boxes, target_boxes).mean()
        if self.use_l1:
            l1_target = torch.cat([target_boxes[:, :2], target_boxes[:, 2:].log()], dim=1)
            loss = loss + F.l1_loss(reg_output, l1_target)
        return loss


head = nn.Sequential(nn.Linear(64, 64), nn.SiLU(), nn.Linear(64, 4))
criterion = BoxLoss()
box_loss = torch.compile(criterion)
opt = torch.optim.SGD(head.parameters(), lr=0.01, momentum=0.9)
for epoch in range(MAX_EPOCH):
    if epoch == MAX_EPOCH - NO_AUG_EPOCHS:  # close mosaic, turn on the L1 loss
        criterion.use_l1 = True
    for it in range(2):
        feats = torch.randn(32, 64)
        targets = torch.cat([torch.rand(32, 2) * 64, torch.rand(32, 2) * 32 + 4], dim=1)
        loss = box_loss(head(feats), targets)
        loss.backward()
        opt.step()
        opt.zero_grad()
print(f"loss {loss.item():.4f}")
