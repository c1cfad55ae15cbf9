"""`openxla` transfer learning with progressive BatchNorm freezing: a pretrained backbone of four
stages is fine-tuned with every BatchNorm training at first, and at the start of each later epoch
`freeze_bn_upto(stage)` puts the BatchNorms of one more stage into `eval()` mode, so their
running statistics stop moving from the bottom up."""
import torch
import torch.nn as nn
import torch.nn.functional as F

try:
    import torch_xla.core.xla_model as xm
    BACKEND, device = "openxla", xm.xla_device()
except ImportError:  # CPU run without torch_xla
    xm, BACKEND, device = None, "eager", torch.device("cpu")

torch.manual_seed(0)


def stage(cin, cout):
    return nn.Sequential(nn.Conv2d(cin, cout, 3, padding=1, bias=False), nn.BatchNorm2d(cout),
                         nn.ReLU(), nn.MaxPool2d(2))


class Classifier(nn.Module):
    def __init__(self, classes=10):
        super().__init__()
        self.stages = nn.ModuleList([stage(3, 16), stage(16, 32), stage(32, 32), stage(32, 64)])
        self.fc = nn.Linear(64, classes)

    def forward(self, x):
        for s in self.stages:
            x = s(x)
        return self.fc(x.mean((2, 3)))


def freeze_bn_upto(model, last_stage):
    model.train()
    for s in model.stages[:last_stage + 1]:
        for m in s.modules():
            if isinstance(m, nn.BatchNorm2d):
                m.eval()


model = Classifier().to(device)
step_model = torch.compile(model, backend=BACKEND)
opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
for epoch in range(5):
    if epoch > 0:
        freeze_bn_upto(model, epoch - 1)
    for batch in range(2):
        x = torch.randn(8, 3, 32, 32, device=device)
        y = torch.randint(0, 10, (8,), device=device)
        loss = F.cross_entropy(step_model(x), y)
        loss.backward()
        opt.step()
        opt.zero_grad()
        if xm is not None:
            xm.mark_step()
    print(epoch, f"loss {loss.item():.4f}")
