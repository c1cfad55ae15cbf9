import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


@torch.compile
def detection_loss(cls_logits, box_pred, labels, box_target):
    cls = F.cross_entropy(cls_logits, labels)
    box = F.smooth_l1_loss(box_pred, box_target)
    total = cls + 2.0 * box
    logs = {"cls": cls.item(), "box": box.item()}
    return total, logs


model = nn.Linear(16, 9)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
history = []
for step in range(4):
    out = model(torch.randn(8, 16))
    loss, logs = detection_loss(out[:, :5], out[:, 5:], torch.randint(0, 5, (8,)), torch.randn(8, 4))
    loss.backward()
    opt.step()
    opt.zero_grad()
    history.append(logs)
print(history[-1])
