# ReduceLROnPlateau stepped with a device tensor (the scheduler turns it into a float).
import torch
import torch_xla
import torch_xla.core.xla_model as xm

device = torch_xla.device()
torch.manual_seed(19)
model = torch.nn.Linear(4, 1).to(device)
opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
sched = torch.optim.lr_scheduler.ReduceLROnPlateau(opt, patience=1)
vx, vy = torch.randn(8, 4).to(device), torch.randn(8, 1).to(device)
for epoch in range(4):
    for _ in range(2):
        x, y = torch.randn(4, 4).to(device), torch.randn(4, 1).to(device)
        loss = torch.nn.functional.mse_loss(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        xm.mark_step()
    with torch.no_grad():
        val = torch.nn.functional.mse_loss(model(vx), vy)
    sched.step(val)
print(opt.param_groups[0]["lr"])
