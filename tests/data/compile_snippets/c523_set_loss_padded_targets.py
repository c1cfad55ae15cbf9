"""`torch_xla.compile` set-prediction detector: the collate pads every image's ground-truth boxes to
a fixed `MAX_OBJECTS` with a validity mask (some images have none, some a single object), and the
compiled loss matches each box to its cheapest query by L1 cost and adds a no-object term, with
the padded rows weighted by zero."""
import torch
import torch.nn as nn
import torch.nn.functional as F

try:
    import torch_xla
    xla_compile, device = torch_xla.compile, torch_xla.device()
except ImportError:  # CPU run without torch_xla
    torch_xla, xla_compile, device = None, torch.compile, torch.device("cpu")

torch.manual_seed(0)
QUERIES, CLASSES, MAX_OBJECTS = 12, 5, 8
backbone = nn.Sequential(nn.Conv2d(3, 16, 4, 4), nn.ReLU(), nn.AdaptiveAvgPool2d(1), nn.Flatten())
box_head = nn.Linear(16, QUERIES * 4).to(device)
cls_head = nn.Linear(16, QUERIES * (CLASSES + 1)).to(device)
backbone.to(device)


def collate(counts):
    boxes = torch.zeros(len(counts), MAX_OBJECTS, 4)
    labels = torch.zeros(len(counts), MAX_OBJECTS, dtype=torch.long)
    valid = torch.zeros(len(counts), MAX_OBJECTS)
    for i, n in enumerate(counts):
        boxes[i, :n], labels[i, :n], valid[i, :n] = torch.rand(n, 4), torch.randint(0, CLASSES, (n,)), 1
    return boxes.to(device), labels.to(device), valid.to(device)


def set_loss(images, gt_boxes, gt_labels, valid):
    feats = backbone(images)
    boxes = box_head(feats).view(-1, QUERIES, 4).sigmoid()
    logits = cls_head(feats).view(-1, QUERIES, CLASSES + 1)
    total = F.cross_entropy(logits.flatten(0, 1), torch.full((logits.shape[0] * QUERIES,), CLASSES,
                                                             device=images.device)) * 0.1
    best = torch.cdist(gt_boxes, boxes, p=1).argmin(dim=2)
    matched_boxes = torch.gather(boxes, 1, best.unsqueeze(-1).expand(-1, -1, 4))
    matched_logits = torch.gather(logits, 1, best.unsqueeze(-1).expand(-1, -1, CLASSES + 1))
    per_box = F.l1_loss(matched_boxes, gt_boxes, reduction="none").sum(-1)
    per_cls = F.cross_entropy(matched_logits.transpose(1, 2), gt_labels, reduction="none")
    norm = valid.sum(1).clamp(min=1)
    return total + ((per_box * valid).sum(1) / norm).sum() + (per_cls * valid).sum() / 4


step = xla_compile(set_loss)
params = [*backbone.parameters(), *box_head.parameters(), *cls_head.parameters()]
opt = torch.optim.AdamW(params, lr=1e-4)
objects_per_image = [[3, 5, 2, 4], [6, 1, 2, 3], [2, 4, 0, 5], [4, 3, 1, 6], [5, 2, 3, 2], [1, 1, 4, 5]]
for counts in objects_per_image:
    images = torch.randn(len(counts), 3, 64, 64, device=device)
    loss = step(images, *collate(counts))
    loss.backward()
    opt.step()
    opt.zero_grad()
    if torch_xla is not None:
        torch_xla.sync()
print(f"loss {loss.item():.4f}")
