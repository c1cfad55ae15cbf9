"""Gaudi inference with weight-only int8 quantization done by hand: each Linear is swapped for a
`QLinear` whose weight is an `Int8Weight` wrapper tensor (int8 data plus a per-row scale) that
dequantizes itself in `__torch_dispatch__` whenever an operator touches it."""
import torch
import torch.nn as nn

try:
    import habana_frameworks.torch.core as htcore
    BACKEND = "hpu_backend"
except ImportError:
    htcore, BACKEND = None, "eager"


class Int8Weight(torch.Tensor):
    @staticmethod
    def __new__(cls, qdata, scale):
        return torch.Tensor._make_wrapper_subclass(cls, qdata.shape, dtype=scale.dtype)

    def __init__(self, qdata, scale):
        self.qdata, self.scale = qdata, scale

    @classmethod
    def __torch_dispatch__(cls, func, types, args=(), kwargs=None):
        deq = lambda a: a.qdata.to(a.scale.dtype) * a.scale if isinstance(a, Int8Weight) else a
        return func(*[deq(a) for a in args], **{k: deq(v) for k, v in (kwargs or {}).items()})


class QLinear(nn.Module):
    def __init__(self, linear):
        super().__init__()
        w = linear.weight.detach()
        scale = w.abs().amax(1, keepdim=True) / 127
        self.weight = Int8Weight(torch.round(w / scale).to(torch.int8), scale)
        self.bias = linear.bias

    def forward(self, x):
        return nn.functional.linear(x, self.weight, self.bias)


def quantize_(model):
    for name, mod in model.named_children():
        if isinstance(mod, nn.Linear):
            setattr(model, name, QLinear(mod))


torch.manual_seed(0)
model = nn.Sequential(nn.Linear(32, 64), nn.GELU(), nn.Linear(64, 8)).eval()
quantize_(model)
cmodel = torch.compile(model, backend=BACKEND)
with torch.no_grad():
    for _ in range(3):
        out = cmodel(torch.randn(4, 32))
        if htcore is not None:
            htcore.mark_step()
print(out.shape)
