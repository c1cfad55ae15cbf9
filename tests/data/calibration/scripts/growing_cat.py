# Outputs collected with torch.cat every step: the accumulator grows and every step compiles.
import torch
import torch_xla
import torch_xla.core.xla_model as xm

device = torch_xla.device()
model = torch.nn.Linear(8, 2).to(device)
acc = torch.zeros(0, 2, device=device)
with torch.no_grad():
    for step in range(6):
        acc = torch.cat([acc, model(torch.randn(3, 8).to(device))])
        xm.mark_step()
print(acc.shape, acc.sum().item())
