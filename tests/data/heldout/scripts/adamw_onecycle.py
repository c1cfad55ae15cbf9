# AdamW with OneCycleLR (learning rate and betas change every step) and a marker per step.
import torch
import torch_xla
import torch_xla.core.xla_model as xm

device = torch_xla.device()
torch.manual_seed(10)
model = torch.nn.Linear(4, 4).to(device)
opt = torch.optim.AdamW(model.parameters(), lr=1e-2, weight_decay=0.01)
sched = torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=1e-2, total_steps=6)
for step in range(6):
    x = torch.randn(5, 4).to(device)
    loss = (model(x) - x).pow(2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
    sched.step()
    xm.mark_step()
print(loss.item())
