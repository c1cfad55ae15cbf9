# Losses written into a device buffer at slot step % 4, the buffer read after the loop.
import torch
import torch_xla
import torch_xla.core.xla_model as xm

device = torch_xla.device()
torch.manual_seed(22)
model = torch.nn.Linear(4, 2).to(device)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
history = torch.zeros(4, device=device)
for step in range(8):
    x = torch.randn(3, 4).to(device)
    loss = model(x).pow(2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
    history[step % 4] = loss.detach()
    xm.mark_step()
print(history.cpu())
