# A script that reads PyTorch/XLA's own metrics at the end.
import torch
import torch_xla
import torch_xla.core.xla_model as xm
import torch_xla.debug.metrics as met

device = torch_xla.device()
x = torch.randn(4, device=device)
for step in range(5):
    x = x * 0.9 + 0.1
    xm.mark_step()
print(met.metric_data("CompileTime")[0], met.counter_value("MarkStep"))
print(x.sum().item())
