"""PyTorch/XLA: a sampling loop that indexes a schedule with the loop counter (steps[i]):
each step is another graph. Ends with the metrics report.

Run: PJRT_DEVICE=CPU PT_XLA_DEBUG=1 PT_XLA_DEBUG_LEVEL=1 python loop_index.py > loop_index.log 2>&1
"""
import torch
import torch_xla
import torch_xla.core.xla_model as xm
import torch_xla.debug.metrics as met

device = torch_xla.device()
torch.manual_seed(0)
model = torch.nn.Linear(8, 8).to(device)
steps = torch.linspace(1.0, 0.0, 13).to(device)
x = torch.randn(2, 8).to(device)
with torch.no_grad():
    for i in range(12):
        t = steps[i]
        x = x * t - model(x) * (1 - t)
        xm.mark_step()
print(met.metrics_report())
