# Eager mode outside, torch_xla.compile around the training step.
import torch
import torch_xla
import torch_xla.core.xla_model as xm

torch_xla.experimental.eager_mode(True)
device = torch_xla.device()
torch.manual_seed(0)
model = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.ReLU(), torch.nn.Linear(16, 1)).to(device)
opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)


def step_fn(x):
    opt.zero_grad()
    loss = model(x).pow(2).mean()
    loss.backward()
    opt.step()
    return loss


compiled = torch_xla.compile(step_fn)
for step in range(6):
    x = torch.randn(4, 8).to(device)
    loss = compiled(x)
print(loss.item())
