# A Python loop over range(n) that indexes device tensors with the loop variable: per-task heads
# stored as rows of one parameter, task i chosen as step % 4; inside the step a second loop sums
# the first three rows of a device table one by one.
import torch
import torch_xla
import torch_xla.core.xla_model as xm

device = xm.xla_device()
torch.manual_seed(77)
NUM_TASKS = 4
heads = torch.nn.Parameter(torch.randn(NUM_TASKS, 8, device=device) * 0.1)
table = torch.randn(3, 8).to(device)
opt = torch.optim.SGD([heads], lr=0.1)
for step in range(8):
    i = step % NUM_TASKS
    x = torch.randn(5, 8).to(device)
    context = table[0]
    for j in range(1, 3):
        context = context + table[j]
    pred = (x + context) @ heads[i]
    loss = pred.pow(2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
    xm.mark_step()
print("head norms", heads.detach().norm(dim=1).cpu())
