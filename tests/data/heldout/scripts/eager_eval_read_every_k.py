# Eager mode, inference only: the running mean of the outputs read every third batch.
import torch
import torch_xla

torch_xla.experimental.eager_mode(True)
device = torch_xla.device()
torch.manual_seed(11)
model = torch.nn.Sequential(torch.nn.Linear(6, 6), torch.nn.Tanh()).to(device)
total = torch.zeros(6, device=device)
with torch.no_grad():
    for step in range(6):
        x = torch.randn(2, 6).to(device)
        total += model(x).mean(0)
        if step % 3 == 2:
            print(step, total.sum().item())
