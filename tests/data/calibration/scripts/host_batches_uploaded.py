# A new host batch every step, uploaded with .to(device): one graph for all steps.
import torch
import torch_xla
import torch_xla.core.xla_model as xm

device = torch_xla.device()
torch.manual_seed(0)
model = torch.nn.Linear(16, 4).to(device)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for step in range(8):
    x, y = torch.randn(8, 16), torch.randint(0, 4, (8,))
    x, y = x.to(device), y.to(device)
    opt.zero_grad()
    loss = torch.nn.functional.cross_entropy(model(x), y)
    loss.backward()
    opt.step()
    xm.mark_step()
print(loss.item())
