"""Quantization-aware fine-tuning on Gaudi: every linear layer of a small classifier is wrapped by
a helper that fake-quantizes its input activations and weights with observers, then the model is
compiled for HPU."""
import torch
import torch.ao.quantization as tq
import torch.nn as nn
import torch.nn.functional as F

try:
    import habana_frameworks.torch.core as htcore
    BACKEND = "hpu_backend"
except ImportError:
    htcore, BACKEND = None, "inductor"

torch.manual_seed(0)


class QATLinear(nn.Module):
    def __init__(self, linear):
        super().__init__()
        self.linear = linear
        self.act_fq = tq.FakeQuantize(observer=tq.MovingAverageMinMaxObserver, quant_min=0, quant_max=255)
        self.w_fq = tq.FakeQuantize(observer=tq.MovingAverageMinMaxObserver, quant_min=-128,
                                    quant_max=127, dtype=torch.qint8, qscheme=torch.per_tensor_symmetric)

    def forward(self, x):
        return F.linear(self.act_fq(x), self.w_fq(self.linear.weight), self.linear.bias)


def prepare_qat(module):
    for name, child in module.named_children():
        if isinstance(child, nn.Linear):
            setattr(module, name, QATLinear(child))
        else:
            prepare_qat(child)
    return module


model = prepare_qat(nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 4)))
cmodel = torch.compile(model, backend=BACKEND)
opt = torch.optim.SGD(model.parameters(), lr=0.01)
for step in range(4):
    loss = F.cross_entropy(cmodel(torch.randn(8, 16)), torch.randint(0, 4, (8,)))
    loss.backward()
    opt.step()
    opt.zero_grad()
    if htcore is not None:
        htcore.mark_step()
print(loss.detach())
