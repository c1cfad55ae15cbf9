"""`openxla` keyword-spotting model fine-tuned with quantization-aware training: after a few float
warm-up steps a `convert` helper switches every `nn.Linear` to a fake-quantizing subclass in place
by assigning its `__class__`, which keeps the weights, the optimizer state and the compiled
model, and training goes on with quantization noise."""
import torch
import torch.nn as nn
import torch.nn.functional as F

try:
    import torch_xla.core.xla_model as xm
    BACKEND, device = "openxla", xm.xla_device()
except ImportError:  # CPU run without torch_xla
    xm, BACKEND, device = None, "eager", torch.device("cpu")

torch.manual_seed(0)
WARMUP_STEPS = 3


def fake_quant(w, bits=8):
    scale = w.detach().abs().amax(dim=1, keepdim=True) / (2 ** (bits - 1) - 1)
    return w + (torch.round(w / scale) * scale - w).detach()


class QATLinear(nn.Linear):
    def forward(self, x):
        return F.linear(x, fake_quant(self.weight), self.bias)


def convert(model, cls):
    for module in model.modules():
        if isinstance(module, nn.Linear):
            module.__class__ = cls


model = nn.Sequential(nn.Flatten(), nn.Linear(40 * 8, 64), nn.ReLU(), nn.Linear(64, 64), nn.ReLU(),
                      nn.Linear(64, 12)).to(device)
step_model = torch.compile(model, backend=BACKEND)
opt = torch.optim.SGD(model.parameters(), lr=0.05)
for step in range(8):
    if step == WARMUP_STEPS:
        convert(model, QATLinear)
    mfcc = torch.randn(16, 40, 8, device=device)
    labels = torch.randint(0, 12, (16,), device=device)
    loss = F.cross_entropy(step_model(mfcc), labels)
    loss.backward()
    opt.step()
    opt.zero_grad()
    if xm is not None:
        xm.mark_step()
print(f"loss {loss.item():.4f}")
