# An exponential moving average of the loss kept on the device (0.9 / 0.1), read every fifth step.
import torch
import torch_xla
import torch_xla.core.xla_model as xm

device = torch_xla.device()
torch.manual_seed(16)
model = torch.nn.Linear(3, 1).to(device)
opt = torch.optim.SGD(model.parameters(), lr=0.01)
ema = None
for step in range(10):
    x = torch.randn(6, 3).to(device)
    loss = model(x).pow(2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
    ema = loss.detach() if ema is None else 0.9 * ema + 0.1 * loss.detach()
    xm.mark_step()
    if (step + 1) % 5 == 0:
        print(step, ema.item())
