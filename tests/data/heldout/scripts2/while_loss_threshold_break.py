# Train until the loss is small enough: a while loop with a host check on loss.item() and a
# maximum number of steps.
import torch
import torch_xla
import torch_xla.core.xla_model as xm

device = torch_xla.device()
torch.manual_seed(41)
x = torch.randn(32, 3).to(device)
true_w = torch.tensor([[1.5], [-2.0], [0.5]]).to(device)
y = x @ true_w + 0.3
model = torch.nn.Linear(3, 1).to(device)
opt = torch.optim.SGD(model.parameters(), lr=0.3)
step = 0
while True:
    loss = torch.nn.functional.mse_loss(model(x), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    xm.mark_step()
    step += 1
    if loss.item() < 0.05:
        print("converged at step", step)
        break
    if step >= 20:
        print("stopped at step", step)
        break
