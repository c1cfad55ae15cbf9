"""`torch_xla.compile` detector training with a YOLOv5-style `ModelEMA` kept on the device: the EMA
object counts its updates in a 0-d tensor (`self.updates += 1`), ramps the decay with
`decay * (1 - torch.exp(-updates / tau))`, and blends every floating-point entry of the EMA
`state_dict()` towards the model's; its `update` method is compiled to fuse the per-tensor
updates."""
import copy

import torch
import torch.nn as nn

try:
    import torch_xla
    compile_fn, device = torch_xla.compile, torch_xla.device()
except ImportError:  # CPU run without PyTorch/XLA
    torch_xla, compile_fn, device = None, torch.compile, torch.device("cpu")

torch.manual_seed(0)


class ModelEMA:
    def __init__(self, model, decay=0.9999, tau=2000, updates=0):
        self.ema = copy.deepcopy(model).eval()
        self.updates = torch.tensor(float(updates), device=device)
        self.decay = lambda x: decay * (1 - torch.exp(-x / tau))
        for p in self.ema.parameters():
            p.requires_grad_(False)

    def update(self, model):
        with torch.no_grad():
            self.updates += 1
            d = self.decay(self.updates)
            msd = model.state_dict()
            for k, v in self.ema.state_dict().items():
                if v.dtype.is_floating_point:
                    v *= d
                    v += (1 - d) * msd[k].detach()


model = nn.Sequential(nn.Conv2d(3, 16, 3, padding=1), nn.BatchNorm2d(16), nn.SiLU(),
                      nn.Conv2d(16, 8, 1)).to(device)
ema = ModelEMA(model)
ema_update = compile_fn(ema.update)
opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.937, nesterov=True)
for it in range(10):
    images = torch.randn(4, 3, 32, 32).to(device)
    loss = model(images).pow(2).mean()
    loss.backward()
    opt.step()
    opt.zero_grad()
    ema_update(model)
    if torch_xla is not None:
        torch_xla.sync()
print(f"loss {loss.item():.4f} updates {int(ema.updates)}")
