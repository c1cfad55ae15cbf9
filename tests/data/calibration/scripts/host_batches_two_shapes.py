# Host batches of two lengths, alternating: two graphs.
import torch
import torch_xla
import torch_xla.core.xla_model as xm

device = torch_xla.device()
torch.manual_seed(0)
model = torch.nn.Linear(16, 1).to(device)
for step in range(8):
    x = torch.randn(8 if step % 2 == 0 else 5, 16).to(device)
    out = model(x).sum()
    xm.mark_step()
print(out.item())
