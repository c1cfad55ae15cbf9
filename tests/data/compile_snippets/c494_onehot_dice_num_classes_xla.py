"""`torch_xla.compile` multi-dataset semantic segmentation: one backbone with a head per dataset
(21, 19 and 12 classes), batches taken from the datasets in turn, and a compiled Dice plus
cross-entropy loss that turns the label map into channels with
`F.one_hot(target, num_classes)`, the count coming from the batch's dataset config."""
import torch
import torch.nn as nn
import torch.nn.functional as F

try:
    import torch_xla
    compile_step = torch_xla.compile
except ImportError:  # CPU run without torch_xla
    compile_step = torch.compile

torch.manual_seed(0)
DATASETS = {"voc": 21, "cityscapes": 19, "camvid": 12}


class MultiHeadSeg(nn.Module):
    def __init__(self, dim=16):
        super().__init__()
        self.backbone = nn.Sequential(nn.Conv2d(3, dim, 3, padding=1), nn.ReLU(),
                                      nn.Conv2d(dim, dim, 3, padding=1), nn.ReLU())
        self.heads = nn.ModuleDict({name: nn.Conv2d(dim, k, 1) for name, k in DATASETS.items()})

    def forward(self, images, dataset):
        return self.heads[dataset](self.backbone(images))


def dice_ce_loss(logits, target, num_classes, eps=1.0):
    probs = logits.softmax(1)
    onehot = F.one_hot(target, num_classes).permute(0, 3, 1, 2).float()
    inter = (probs * onehot).sum((0, 2, 3))
    dice = 1 - (2 * inter + eps) / (probs.sum((0, 2, 3)) + onehot.sum((0, 2, 3)) + eps)
    return dice.mean() + F.cross_entropy(logits, target)


model = MultiHeadSeg()
loss_fn = compile_step(dice_ce_loss)
opt = torch.optim.SGD(model.parameters(), lr=0.05)
for step in range(6):
    dataset = list(DATASETS)[step % 3]
    images = torch.randn(2, 3, 32, 32)
    target = torch.randint(0, DATASETS[dataset], (2, 32, 32))
    loss = loss_fn(model(images, dataset), target, DATASETS[dataset])
    loss.backward()
    opt.step()
    opt.zero_grad()
    print(dataset, f"loss {loss.item():.4f}")
