# SGD without momentum, MultiStepLR decays at steps 2 and 4, xm.optimizer_step(barrier=True).
import torch
import torch_xla
import torch_xla.core.xla_model as xm

device = torch_xla.device()
torch.manual_seed(9)
model = torch.nn.Linear(7, 2).to(device)
opt = torch.optim.SGD(model.parameters(), lr=0.2, weight_decay=1e-4)
sched = torch.optim.lr_scheduler.MultiStepLR(opt, milestones=[2, 4], gamma=0.1)
for step in range(6):
    x = torch.randn(3, 7).to(device)
    y = torch.randint(0, 2, (3,)).to(device)
    loss = torch.nn.functional.cross_entropy(model(x), y)
    opt.zero_grad()
    loss.backward()
    xm.optimizer_step(opt, barrier=True)
    sched.step()
print(loss.item())
