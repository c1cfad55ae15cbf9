"""`openxla` keyword-spotting model taken through quantization in three phases: float training,
quantization-aware fine-tuning and an int8-simulated evaluation. Between phases a `convert`
helper switches every `nn.Linear` to the phase's subclass in place by assigning its `__class__`,
which keeps the weights, the optimizer state and the compiled model."""
import torch
import torch.nn as nn
import torch.nn.functional as F

try:
    import torch_xla.core.xla_model as xm
    BACKEND, device = "openxla", xm.xla_device()
except ImportError:  # CPU run without torch_xla
    xm, BACKEND, device = None, "eager", torch.device("cpu")

torch.manual_seed(0)


def fake_quant(w, bits=8):
    scale = w.detach().abs().amax(dim=1, keepdim=True) / (2 ** (bits - 1) - 1)
    return w + (torch.round(w / scale) * scale - w).detach()


class QATLinear(nn.Linear):
    def forward(self, x):
        return F.linear(x, fake_quant(self.weight), self.bias)


class Int8SimLinear(nn.Linear):
    def forward(self, x):
        scale = self.weight.abs().amax(dim=1, keepdim=True) / 127
        return F.linear(x, torch.round(self.weight / scale) * scale, self.bias)


def convert(model, cls):
    for module in model.modules():
        if isinstance(module, nn.Linear):
            module.__class__ = cls


model = nn.Sequential(nn.Flatten(), nn.Linear(40 * 8, 64), nn.ReLU(), nn.Linear(64, 64), nn.ReLU(),
                      nn.Linear(64, 12)).to(device)
step_model = torch.compile(model, backend=BACKEND)
opt = torch.optim.SGD(model.parameters(), lr=0.05)
for phase_cls in (None, QATLinear, Int8SimLinear):
    if phase_cls is not None:
        convert(model, phase_cls)
    for _ in range(3):
        mfcc = torch.randn(16, 40, 8, device=device)
        labels = torch.randint(0, 12, (16,), device=device)
        loss = F.cross_entropy(step_model(mfcc), labels)
        if phase_cls is not Int8SimLinear:
            loss.backward()
            opt.step()
            opt.zero_grad()
        if xm is not None:
            xm.mark_step()
    print(phase_cls.__name__ if phase_cls else "float", f"{loss.item():.4f}")
