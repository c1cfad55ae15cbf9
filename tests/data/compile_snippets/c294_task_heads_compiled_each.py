# A multi-task dense-prediction model (segmentation, depth, surface normals) on a shared
# backbone. Each task head is the same ConvHead class built with its own depth and output
# channels, and each head is compiled on its own with torch.compile.
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class ConvHead(nn.Module):
    def __init__(self, in_ch, out_ch, depth):
        super().__init__()
        self.layers = nn.ModuleList(nn.Conv2d(in_ch, in_ch, 3, padding=1) for _ in range(depth))
        self.out = nn.Conv2d(in_ch, out_ch, 1)

    def forward(self, feats, size):
        for conv in self.layers:
            feats = F.relu(conv(feats))
        return F.interpolate(self.out(feats), size=size, mode="bilinear", align_corners=False)


TASKS = {"segmentation": (19, 3), "depth": (1, 2), "normals": (3, 1), "edges": (1, 4)}

backbone = nn.Sequential(nn.Conv2d(3, 16, 3, stride=2, padding=1), nn.ReLU(), nn.Conv2d(16, 16, 3, stride=2, padding=1))
heads = nn.ModuleDict({task: ConvHead(16, out_ch, depth) for task, (out_ch, depth) in TASKS.items()})
compiled_heads = {task: torch.compile(head) for task, head in heads.items()}


def task_losses(preds, images):
    target_seg = torch.randint(0, 19, (images.shape[0], *images.shape[-2:]))
    return {
        "segmentation": F.cross_entropy(preds["segmentation"], target_seg),
        "depth": F.l1_loss(preds["depth"], images.mean(1, keepdim=True)),
        "normals": 1 - F.cosine_similarity(preds["normals"], images, dim=1).mean(),
        "edges": F.binary_cross_entropy_with_logits(preds["edges"], (images[:, :1] > 0).float()),
    }


opt = torch.optim.AdamW([*backbone.parameters(), *heads.parameters()], lr=1e-3)
for step in range(3):
    images = torch.randn(2, 3, 32, 32)
    feats = backbone(images)
    preds = {task: head(feats, images.shape[-2:]) for task, head in compiled_heads.items()}
    loss = sum(task_losses(preds, images).values())
    loss.backward()
    opt.step()
    opt.zero_grad()
print(loss.item())
