# CosineAnnealingLR stepped every iteration, with optimizer.step() followed by xm.mark_step();
# the learning rate is logged from the scheduler (a Python float) and the loss every third step.
import torch
import torch_xla
import torch_xla.core.xla_model as xm

device = xm.xla_device()
torch.manual_seed(65)
model = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.Tanh(),
                            torch.nn.Linear(16, 1)).to(device)
opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9, weight_decay=1e-4)
sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=9, eta_min=0.0)
for step in range(10):
    xc = torch.randn(16, 8)
    x, y = xc.to(device), (xc[:, :1] * 2.0).to(device)
    loss = torch.nn.functional.mse_loss(model(x), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    xm.mark_step()
    sched.step()
    if step % 3 == 0:
        print(f"step {step} lr {sched.get_last_lr()[0]:.5f} loss {loss.item():.4f}")
