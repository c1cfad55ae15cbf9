"""Mean-teacher / EMA weights for a small conv net with batch norm: after each optimizer step a
compiled helper walks the state dicts of the live model and the EMA copy and blends every
floating-point entry, buffers included."""
import copy

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class ModelEma:
    def __init__(self, model, decay=0.999):
        self.module = copy.deepcopy(model).eval()
        for p in self.module.parameters():
            p.requires_grad_(False)
        self.decay = decay
        self._update = torch.compile(self._blend)

    @torch.no_grad()
    def _blend(self, model, decay):
        live = model.state_dict()
        for name, ema_v in self.module.state_dict().items():
            if ema_v.dtype.is_floating_point:
                ema_v.mul_(decay).add_(live[name].detach(), alpha=1.0 - decay)
            else:
                ema_v.copy_(live[name])

    def update(self, model, step):
        self._update(model, min(self.decay, (1 + step) / (10 + step)))


net = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.BatchNorm2d(8), nn.ReLU(),
                    nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(8, 5))
ema = ModelEma(net)
opt = torch.optim.SGD(net.parameters(), lr=0.1, momentum=0.9)
for step in range(6):
    loss = F.cross_entropy(net(torch.randn(4, 3, 16, 16)), torch.randint(0, 5, (4,)))
    loss.backward()
    opt.step()
    opt.zero_grad()
    ema.update(net, step)
print(ema.module[1].running_mean[:3])
