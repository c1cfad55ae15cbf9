"""Detection classifier fine-tuned on a COCO-style subset, sparse category ids mapped to
contiguous class indices by a lookup table: the module registers a buffer as long as the largest
category id plus one, filled with the class index of each kept id and -100 elsewhere, and the
compiled loss indexes it with the batch's ids."""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
CATEGORY_IDS = [1, 3, 7, 18, 44, 62]


class BoxClassifier(nn.Module):
    def __init__(self, feat=32):
        super().__init__()
        self.head = nn.Sequential(nn.Linear(feat, 64), nn.ReLU(), nn.Linear(64, len(CATEGORY_IDS)))
        lut = torch.full((max(CATEGORY_IDS) + 1,), -100, dtype=torch.long)
        lut[torch.tensor(CATEGORY_IDS)] = torch.arange(len(CATEGORY_IDS))
        self.register_buffer("cat_to_index", lut, persistent=False)

    def forward(self, roi_feats):
        return self.head(roi_feats)


model = BoxClassifier()
opt = torch.optim.SGD(model.parameters(), lr=0.05)


@torch.compile
def box_cls_loss(roi_feats, category_ids):
    logits = model(roi_feats)
    return F.cross_entropy(logits, model.cat_to_index[category_ids], ignore_index=-100)


for _ in range(3):
    cats = torch.tensor(CATEGORY_IDS)[torch.randint(0, len(CATEGORY_IDS), (16,))]
    loss = box_cls_loss(torch.randn(16, 32), cats)
    loss.backward()
    opt.step()
    opt.zero_grad()
print(loss.item())
