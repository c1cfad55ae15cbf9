"""PyTorch/XLA: a training loop with nothing to report: one graph, no host reads in the loop.

Run: PJRT_DEVICE=CPU PT_XLA_DEBUG_LEVEL=1 python clean.py > clean.log 2>&1
"""
import torch
import torch_xla
import torch_xla.core.xla_model as xm

device = torch_xla.device()
torch.manual_seed(0)
model = torch.nn.Linear(8, 1).to(device)
optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
for _ in range(4):
    x, y = torch.randn(4, 8).to(device), torch.randn(4, 1).to(device)
    optimizer.zero_grad()
    torch.nn.functional.mse_loss(model(x), y).backward()
    optimizer.step()
    xm.mark_step()
