"""`torch_xla.compile` set-prediction detector: the compiled loss walks the batch's target list,
one dict per image with however many ground-truth boxes the image has (some none, some a single
object), matches each box to its cheapest query by L1 cost and adds a no-object term."""
import torch
import torch.nn as nn
import torch.nn.functional as F

try:
    import torch_xla
    xla_compile, device = torch_xla.compile, torch_xla.device()
except ImportError:  # CPU run without torch_xla
    torch_xla, xla_compile, device = None, torch.compile, torch.device("cpu")

torch.manual_seed(0)
QUERIES, CLASSES = 12, 5
backbone = nn.Sequential(nn.Conv2d(3, 16, 4, 4), nn.ReLU(), nn.AdaptiveAvgPool2d(1), nn.Flatten())
box_head = nn.Linear(16, QUERIES * 4).to(device)
cls_head = nn.Linear(16, QUERIES * (CLASSES + 1)).to(device)
backbone.to(device)


def set_loss(images, targets):
    feats = backbone(images)
    boxes = box_head(feats).view(-1, QUERIES, 4).sigmoid()
    logits = cls_head(feats).view(-1, QUERIES, CLASSES + 1)
    total = F.cross_entropy(logits.flatten(0, 1), torch.full((logits.shape[0] * QUERIES,), CLASSES,
                                                             device=images.device)) * 0.1
    for pred_boxes, pred_logits, target in zip(boxes, logits, targets):
        gt_boxes, gt_labels = target["boxes"], target["labels"]
        cost = torch.cdist(gt_boxes, pred_boxes, p=1)
        best = cost.argmin(dim=1)
        total = total + F.l1_loss(pred_boxes[best], gt_boxes, reduction="sum") / max(len(gt_boxes), 1)
        total = total + F.cross_entropy(pred_logits[best], gt_labels, reduction="sum") / 4
    return total


step = xla_compile(set_loss)
params = [*backbone.parameters(), *box_head.parameters(), *cls_head.parameters()]
opt = torch.optim.AdamW(params, lr=1e-4)
objects_per_image = [[3, 5, 2, 4], [6, 1, 2, 3], [2, 4, 0, 5], [4, 3, 1, 6], [5, 2, 3, 2], [1, 1, 4, 5]]
for counts in objects_per_image:
    images = torch.randn(len(counts), 3, 64, 64, device=device)
    targets = [{"boxes": torch.rand(n, 4, device=device),
                "labels": torch.randint(0, CLASSES, (n,), device=device)} for n in counts]
    loss = step(images, targets)
    loss.backward()
    opt.step()
    opt.zero_grad()
    if torch_xla is not None:
        torch_xla.sync()
print(f"loss {loss.item():.4f}")
