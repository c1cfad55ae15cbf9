# xm.add_step_closure: the loss is read after the step marker, in a closure.
import torch
import torch_xla
import torch_xla.core.xla_model as xm

device = torch_xla.device()
torch.manual_seed(0)
model = torch.nn.Linear(8, 1).to(device)
opt = torch.optim.SGD(model.parameters(), lr=0.05)


def log(step, loss):
    print(f"step {step}: loss {loss.item():.4f}")


for step in range(8):
    x = torch.randn(4, 8).to(device)
    opt.zero_grad()
    loss = model(x).pow(2).mean()
    loss.backward()
    opt.step()
    if step % 2 == 0:
        xm.add_step_closure(log, args=(step, loss))
    torch_xla.sync()
