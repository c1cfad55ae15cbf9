import torch
import torch.nn as nn

torch.manual_seed(0)

model = nn.Sequential(nn.Linear(32, 64), nn.ReLU(), nn.Linear(64, 1))
opt = torch.optim.Adam(model.parameters(), lr=torch.tensor(0.01))
sched = torch.optim.lr_scheduler.LinearLR(opt, start_factor=0.1, total_iters=5)


@torch.compile(fullgraph=False)
def opt_step():
    opt.step()


for step in range(8):
    loss = model(torch.randn(16, 32)).pow(2).mean()
    loss.backward()
    opt_step()
    sched.step()
    opt.zero_grad()
print(loss.item(), opt.param_groups[0]["lr"])
