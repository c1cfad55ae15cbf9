"""DETR-style set prediction loss: predicted boxes are matched one-to-one to the ground-truth boxes
by a small greedy matcher over the cost matrix, then the matched pairs get L1 and class losses."""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


def greedy_match(cost):
    rows, cols, used = [], [], set()
    for r, row in enumerate(cost.tolist()):
        order = sorted(range(len(row)), key=row.__getitem__)
        c = next(c for c in order if c not in used)
        used.add(c)
        rows.append(r)
        cols.append(c)
    return torch.tensor(rows), torch.tensor(cols)


class SetCriterion(nn.Module):
    def forward(self, pred_logits, pred_boxes, tgt_labels, tgt_boxes):
        with torch.no_grad():
            cost = torch.cdist(tgt_boxes, pred_boxes, p=1) - pred_logits.softmax(-1)[:, tgt_labels].t()
            tgt_idx, pred_idx = greedy_match(cost)
        box_loss = F.l1_loss(pred_boxes[pred_idx], tgt_boxes[tgt_idx])
        target_classes = torch.full(pred_logits.shape[:1], pred_logits.shape[1] - 1)
        target_classes[pred_idx] = tgt_labels[tgt_idx]
        return box_loss + F.cross_entropy(pred_logits, target_classes)


head = nn.Linear(32, 4 + 6)
criterion = torch.compile(SetCriterion())
opt = torch.optim.AdamW(head.parameters(), lr=1e-3)
for step in range(4):
    out = head(torch.randn(10, 32))
    loss = criterion(out[:, 4:], out[:, :4].sigmoid(), torch.randint(0, 5, (3,)), torch.rand(3, 4))
    loss.backward()
    opt.step()
    opt.zero_grad()
print(f"loss {loss.item():.4f}")
