# A per-step loss weight taken from a Python list (a curriculum): some steps weigh 1.0, one 0.0,
# the others fractions; the weighted loss is read every other step.
import torch
import torch_xla
import torch_xla.core.xla_model as xm

device = xm.xla_device()
torch.manual_seed(75)
weights = [1.0, 0.5, 0.25, 1.0, 2.0, 0.0, 0.5, 1.0, 0.75, 1.5]
model = torch.nn.Linear(6, 1).to(device)
opt = torch.optim.SGD(model.parameters(), lr=0.05)
for step, w in enumerate(weights):
    x = torch.randn(10, 6).to(device)
    y = torch.randn(10, 1).to(device)
    loss = w * torch.nn.functional.mse_loss(model(x), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    xm.mark_step()
    if step % 2 == 1:
        print(f"step {step} weight {w} loss {loss.item():.4f}")
