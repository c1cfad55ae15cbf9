# torch_xla.compile around the training step in the default (lazy) mode, full_graph=True.
import torch
import torch_xla
import torch_xla.core.xla_model as xm

device = torch_xla.device()
torch.manual_seed(0)
model = torch.nn.Linear(8, 1).to(device)
opt = torch.optim.Adam(model.parameters(), lr=1e-3)


def step_fn(x):
    opt.zero_grad()
    loss = model(x).pow(2).mean()
    loss.backward()
    opt.step()
    return loss


compiled = torch_xla.compile(step_fn, full_graph=True, name="train_step")
for step in range(6):
    loss = compiled(torch.randn(4, 8).to(device))
print(loss.item())
