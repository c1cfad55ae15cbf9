# Adam with a LambdaLR linear warm-up: the learning rate changes every step for four steps.
import torch
import torch_xla
import torch_xla.core.xla_model as xm

device = torch_xla.device()
torch.manual_seed(8)
model = torch.nn.Sequential(torch.nn.Linear(6, 12), torch.nn.GELU(), torch.nn.Linear(12, 1)).to(device)
opt = torch.optim.Adam(model.parameters(), lr=3e-3)
sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda s: min(1.0, (s + 1) / 4))
for step in range(7):
    x = torch.randn(4, 6).to(device)
    loss = model(x).abs().mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
    sched.step()
    xm.mark_step()
print(loss.item(), sched.get_last_lr())
