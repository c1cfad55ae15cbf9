# A causal attention mask made on the host with triu and float("-inf"), moved once to the device.
import torch
import torch_xla
import torch_xla.core.xla_model as xm

device = torch_xla.device()
torch.manual_seed(21)
T = 5
mask = torch.triu(torch.full((T, T), float("-inf")), diagonal=1).to(device)
qkv = torch.nn.Linear(8, 24).to(device)
opt = torch.optim.AdamW(qkv.parameters(), lr=1e-3)
for step in range(5):
    x = torch.randn(2, T, 8).to(device)
    q, k, v = qkv(x).chunk(3, dim=-1)
    att = (q @ k.transpose(-2, -1)) * (8 ** -0.5) + mask
    y = att.softmax(-1) @ v
    loss = y.pow(2).mean()
    opt.zero_grad(set_to_none=True)
    loss.backward()
    opt.step()
    xm.mark_step()
print(loss.item())
