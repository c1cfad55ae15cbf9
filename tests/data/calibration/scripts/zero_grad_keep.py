# zero_grad(set_to_none=False): gradients are zeroed in place, not dropped.
import torch
import torch_xla
import torch_xla.core.xla_model as xm

device = torch_xla.device()
torch.manual_seed(0)
model = torch.nn.Linear(8, 1).to(device)
opt = torch.optim.SGD(model.parameters(), lr=0.05)
for step in range(6):
    x = torch.randn(4, 8).to(device)
    opt.zero_grad(set_to_none=False)
    loss = model(x).pow(2).mean()
    loss.backward()
    opt.step()
    xm.mark_step()
print(loss.item())
