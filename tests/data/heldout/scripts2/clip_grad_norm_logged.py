# Gradient clipping with the total norm logged every third step (the norm is a device tensor).
import torch
import torch_xla
import torch_xla.core.xla_model as xm

device = xm.xla_device()
torch.manual_seed(53)
model = torch.nn.Sequential(torch.nn.Linear(6, 20), torch.nn.ReLU(),
                            torch.nn.Linear(20, 6)).to(device)
opt = torch.optim.SGD(model.parameters(), lr=0.5)
for step in range(9):
    x = torch.randn(10, 6).to(device)
    loss = torch.nn.functional.mse_loss(model(x), x)
    opt.zero_grad()
    loss.backward()
    grad_norm = torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm=1.0)
    opt.step()
    xm.mark_step()
    if step % 3 == 0:
        print(f"step {step} loss {loss.item():.4f} grad norm {grad_norm.item():.4f}")
