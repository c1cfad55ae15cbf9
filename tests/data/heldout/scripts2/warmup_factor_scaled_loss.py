# A linear warmup applied by hand: the loss is multiplied by a Python float that grows every
# step until it reaches 1.0, then stays there.
import torch
import torch_xla
import torch_xla.core.xla_model as xm

device = torch_xla.device()
torch.manual_seed(3)
warmup_steps = 5
model = torch.nn.Sequential(torch.nn.Linear(12, 24), torch.nn.Tanh(),
                            torch.nn.Linear(24, 1)).to(device)
opt = torch.optim.Adam(model.parameters(), lr=1e-3)

for step in range(10):
    x = torch.randn(16, 12).to(device)
    target = torch.randn(16, 1).to(device)
    warmup = min(1.0, (step + 1) / warmup_steps)
    loss = torch.nn.functional.mse_loss(model(x), target) * warmup
    opt.zero_grad()
    loss.backward()
    opt.step()
    xm.mark_step()
print("final loss", loss.item())
