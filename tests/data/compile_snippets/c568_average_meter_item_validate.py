"""`openxla` ImageNet-style validation written after the PyTorch examples script: the compiled
`validate_step` computes the loss and top-1/top-5 accuracy with the usual `accuracy(output, target,
topk=(1, 5))` helper and updates the `AverageMeter`s for the progress display itself, with
`loss.item()` and `acc1[0].item()` weighted by the batch size."""
import torch
import torch.nn as nn
import torch.nn.functional as F

try:
    import torch_xla.core.xla_model as xm
    BACKEND, device = "openxla", xm.xla_device()
except ImportError:  # CPU run without PyTorch/XLA
    xm, BACKEND, device = None, "eager", torch.device("cpu")

torch.manual_seed(0)


class AverageMeter:
    def __init__(self, name, fmt=":f"):
        self.name, self.fmt = name, fmt
        self.reset()

    def reset(self):
        self.val = self.avg = self.sum = 0.0
        self.count = 0

    def update(self, val, n=1):
        self.val = val
        self.sum += val * n
        self.count += n
        self.avg = self.sum / self.count


def accuracy(output, target, topk=(1,)):
    maxk = max(topk)
    batch_size = target.size(0)
    _, pred = output.topk(maxk, 1, True, True)
    pred = pred.t()
    correct = pred.eq(target.view(1, -1).expand_as(pred))
    return [correct[:k].reshape(-1).float().sum(0, keepdim=True).mul_(100.0 / batch_size) for k in topk]


model = nn.Sequential(nn.Conv2d(3, 16, 3, stride=2, padding=1), nn.ReLU(), nn.AdaptiveAvgPool2d(1),
                      nn.Flatten(), nn.Linear(16, 100)).to(device).eval()
losses, top1, top5 = AverageMeter("Loss", ":.4e"), AverageMeter("Acc@1", ":6.2f"), AverageMeter("Acc@5", ":6.2f")


def validate_step(images, target):
    output = model(images)
    loss = F.cross_entropy(output, target)
    acc1, acc5 = accuracy(output, target, topk=(1, 5))
    losses.update(loss.item(), images.size(0))
    top1.update(acc1[0].item(), images.size(0))
    top5.update(acc5[0].item(), images.size(0))
    return output


compiled_step = torch.compile(validate_step, backend=BACKEND)
with torch.no_grad():
    for i in range(4):
        images = torch.randn(32, 3, 32, 32).to(device)
        target = torch.randint(0, 100, (32,)).to(device)
        compiled_step(images, target)
        if xm is not None:
            xm.mark_step()
print(f" * Acc@1 {top1.avg:.3f} Acc@5 {top5.avg:.3f} Loss {losses.avg:.4f}")
