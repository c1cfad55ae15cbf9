# Reading .shape in Python arithmetic: the loss is a sum divided by the batch size taken from
# x.shape[0] (22 samples in batches of 6: the last batch has 4), and the attention-style scale is
# 1 / sqrt(x.shape[-1]).
import math

import torch
import torch_xla
import torch_xla.core.xla_model as xm

device = xm.xla_device()
torch.manual_seed(79)
proj = torch.nn.Linear(9, 9).to(device)
opt = torch.optim.SGD(proj.parameters(), lr=0.1)
data = torch.randn(22, 9)
for epoch in range(2):
    for start in range(0, data.shape[0], 6):
        x = data[start:start + 6].to(device)
        batch, dim = x.shape
        q = proj(x)
        scores = (q @ x.t()) * (1.0 / math.sqrt(dim))
        loss = torch.logsumexp(scores, dim=1).sum() / batch
        opt.zero_grad()
        loss.backward()
        opt.step()
        xm.mark_step()
    print(f"epoch {epoch} last batch {batch} loss {loss.item():.4f}")
