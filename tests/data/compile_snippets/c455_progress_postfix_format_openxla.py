"""`openxla` image-classifier training with a progress display: the compiled step formats the
batch loss into the progress bar's postfix with `"loss={:.4f}".format(loss)` while it computes
it, and the display shows the postfix after each step."""
import torch
import torch.nn as nn
import torch.nn.functional as F

try:
    import torch_xla.core.xla_model as xm
    BACKEND, device = "openxla", xm.xla_device()
except ImportError:  # CPU run without torch_xla
    xm, BACKEND, device = None, "eager", torch.device("cpu")

torch.manual_seed(0)


class Progress:
    def __init__(self, total):
        self.total, self.n, self.postfix = total, 0, ""

    def update(self):
        self.n += 1
        print(f"\r[{self.n}/{self.total}] {self.postfix}", end="")


model = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.ReLU(), nn.AdaptiveAvgPool2d(1),
                      nn.Flatten(), nn.Linear(8, 10)).to(device)
bar = Progress(total=5)


@torch.compile(backend=BACKEND)
def train_loss(images, labels):
    loss = F.cross_entropy(model(images), labels)
    bar.postfix = "loss={:.4f}".format(loss)
    return loss


opt = torch.optim.SGD(model.parameters(), lr=0.1)
for _ in range(bar.total):
    images = torch.randn(16, 3, 16, 16, device=device)
    labels = torch.randint(0, 10, (16,), device=device)
    loss = train_loss(images, labels)
    loss.backward()
    opt.step()
    opt.zero_grad()
    if xm is not None:
        xm.mark_step()
    bar.update()
print()
