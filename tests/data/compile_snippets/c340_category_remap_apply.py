"""Detection classifier fine-tuned on a COCO-style subset: the dataset keeps the original sparse
category ids (1, 3, 7, 18, ...) and the compiled loss maps them to contiguous class indices with
`Tensor.apply_` and the id-to-index dict before the cross-entropy."""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
CATEGORY_IDS = [1, 3, 7, 18, 44, 62]
CAT_TO_INDEX = {cat: i for i, cat in enumerate(CATEGORY_IDS)}


class BoxClassifier(nn.Module):
    def __init__(self, feat=32, num_classes=len(CATEGORY_IDS)):
        super().__init__()
        self.head = nn.Sequential(nn.Linear(feat, 64), nn.ReLU(), nn.Linear(64, num_classes))

    def forward(self, roi_feats):
        return self.head(roi_feats)


def to_contiguous(category_ids):
    return category_ids.clone().apply_(CAT_TO_INDEX.__getitem__)


model = BoxClassifier()
opt = torch.optim.SGD(model.parameters(), lr=0.05)


@torch.compile
def box_cls_loss(roi_feats, category_ids):
    logits = model(roi_feats)
    return F.cross_entropy(logits, to_contiguous(category_ids))


for _ in range(3):
    cats = torch.tensor(CATEGORY_IDS)[torch.randint(0, len(CATEGORY_IDS), (16,))]
    loss = box_cls_loss(torch.randn(16, 32), cats)
    loss.backward()
    opt.step()
    opt.zero_grad()
print(loss.item())
