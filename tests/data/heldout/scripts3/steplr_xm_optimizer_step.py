# StepLR (gamma 0.5 every 4 steps) with xm.optimizer_step(opt) and a mark_step after it, Adam.
import torch
import torch_xla
import torch_xla.core.xla_model as xm

device = xm.xla_device()
torch.manual_seed(66)
model = torch.nn.Linear(10, 3).to(device)
opt = torch.optim.Adam(model.parameters(), lr=0.01)
sched = torch.optim.lr_scheduler.StepLR(opt, step_size=4, gamma=0.5)
loss_fn = torch.nn.CrossEntropyLoss()
for step in range(12):
    x = torch.randn(12, 10).to(device)
    y = torch.randint(0, 3, (12,)).to(device)
    opt.zero_grad()
    loss = loss_fn(model(x), y)
    loss.backward()
    xm.optimizer_step(opt)
    xm.mark_step()
    sched.step()
print("lr", sched.get_last_lr(), "loss", loss.item())
