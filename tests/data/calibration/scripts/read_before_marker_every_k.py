# loss.item() every third step, before the step marker: the read compiles its own graph.
import torch
import torch_xla
import torch_xla.core.xla_model as xm

device = torch_xla.device()
torch.manual_seed(0)
model = torch.nn.Linear(8, 1).to(device)
opt = torch.optim.SGD(model.parameters(), lr=0.01)
for step in range(9):
    x = torch.randn(4, 8).to(device)
    opt.zero_grad()
    loss = model(x).pow(2).mean()
    loss.backward()
    opt.step()
    if step % 3 == 0:
        print(f"step {step}: {loss.item():.4f}")
    xm.mark_step()
