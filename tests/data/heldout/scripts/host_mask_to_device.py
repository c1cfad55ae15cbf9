# A padding mask built on the host with comparisons, moved with .to(device), used in masked_fill.
import torch
import torch_xla
import torch_xla.core.xla_model as xm

device = torch_xla.device()
torch.manual_seed(4)
emb = torch.nn.Embedding(20, 8).to(device)
head = torch.nn.Linear(8, 2).to(device)
opt = torch.optim.Adam(list(emb.parameters()) + list(head.parameters()), lr=1e-3)
for step in range(6):
    lengths = torch.randint(2, 7, (3,))
    tokens = torch.randint(1, 20, (3, 6))
    pad = torch.arange(6)[None, :] >= lengths[:, None]
    tokens = tokens.masked_fill(pad, 0)
    h = emb(tokens.to(device))
    h = h.masked_fill(pad.to(device)[..., None], 0.0)
    pooled = h.sum(1) / lengths.to(device)[:, None].float()
    loss = head(pooled).logsumexp(-1).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
    xm.mark_step()
print(loss.item())
