# Batches made with numpy and torch.from_numpy on the host, then uploaded.
import numpy as np
import torch
import torch_xla
import torch_xla.core.xla_model as xm

device = torch_xla.device()
rng = np.random.default_rng(0)
model = torch.nn.Linear(16, 1).to(device)
for step in range(8):
    batch = rng.standard_normal((8, 16)).astype(np.float32)
    x = torch.from_numpy(batch).to(device)
    out = model(x).mean()
    xm.mark_step()
print(out.item())
