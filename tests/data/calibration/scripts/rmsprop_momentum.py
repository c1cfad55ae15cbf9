# RMSprop with momentum.
import torch
import torch_xla
import torch_xla.core.xla_model as xm

device = torch_xla.device()
torch.manual_seed(0)
model = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.ReLU(), torch.nn.Linear(16, 1)).to(device)
opt = torch.optim.RMSprop(model.parameters(), lr=1e-3, momentum=0.9)
data = torch.randn(8, 4, 8)
for step in range(8):
    x = data[step].to(device)
    opt.zero_grad()
    loss = model(x).pow(2).mean()
    loss.backward()
    opt.step()
    xm.mark_step()
print(loss.item())
