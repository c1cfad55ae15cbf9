# MpDeviceLoader with xm.optimizer_step, a StepLR scheduler, and a step closure that logs the
# loss and the learning rate every step.
import torch
import torch_xla
import torch_xla.core.xla_model as xm
import torch_xla.distributed.parallel_loader as pl

device = torch_xla.device()
torch.manual_seed(59)
dataset = torch.utils.data.TensorDataset(torch.randn(48, 10), torch.randint(0, 4, (48,)))
loader = torch.utils.data.DataLoader(dataset, batch_size=12, shuffle=True)
model = torch.nn.Sequential(torch.nn.Linear(10, 16), torch.nn.ReLU(),
                            torch.nn.Linear(16, 4)).to(device)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
sched = torch.optim.lr_scheduler.StepLR(opt, step_size=3, gamma=0.5)


def log(step, loss, lr):
    print(f"step {step} loss {loss.item():.4f} lr {lr:.4f}")


train_loader = pl.MpDeviceLoader(loader, device)
global_step = 0
for epoch in range(2):
    for x, y in train_loader:
        loss = torch.nn.functional.cross_entropy(model(x), y)
        opt.zero_grad()
        loss.backward()
        xm.optimizer_step(opt)
        xm.add_step_closure(log, args=(global_step, loss, sched.get_last_lr()[0]))
        global_step += 1
    sched.step()
