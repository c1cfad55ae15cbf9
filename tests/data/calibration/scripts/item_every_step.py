# loss.item() before the step marker, every step.
import torch
import torch_xla
import torch_xla.core.xla_model as xm

device = torch_xla.device()
torch.manual_seed(0)
model = torch.nn.Linear(8, 1).to(device)
opt = torch.optim.SGD(model.parameters(), lr=0.01)
data = torch.randn(10, 4, 8)
for step in range(10):
    x = data[step].to(device)
    opt.zero_grad()
    loss = model(x).pow(2).mean()
    loss.backward()
    opt.step()
    print(f"step {step} loss {loss.item():.4f}")
    xm.mark_step()
