# Host-side statistics of host tensors (mean, item, numpy) next to device training.
import torch
import torch_xla
import torch_xla.core.xla_model as xm

device = torch_xla.device()
model = torch.nn.Linear(8, 1).to(device)
lengths = []
for step in range(6):
    x = torch.randn(4, 8)
    lengths.append(x.norm().item())
    y = model(x.to(device)).sum()
    xm.mark_step()
print(sum(lengths) / len(lengths), torch.tensor(lengths).mean().numpy())
