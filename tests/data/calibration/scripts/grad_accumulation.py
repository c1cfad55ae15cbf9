# Gradient accumulation: three backward passes, one optimizer step, one marker per step.
import torch
import torch_xla
import torch_xla.core.xla_model as xm

device = torch_xla.device()
torch.manual_seed(0)
model = torch.nn.Linear(8, 1).to(device)
opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
for step in range(5):
    for micro in range(3):
        x = torch.randn(4, 8).to(device)
        loss = model(x).pow(2).mean() / 3
        loss.backward()
    opt.step()
    opt.zero_grad()
    xm.mark_step()
print(loss.item())
