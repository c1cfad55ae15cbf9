# with torch_xla.step(): the block is a step of its own.
import torch
import torch_xla

device = torch_xla.device()
torch.manual_seed(0)
model = torch.nn.Linear(8, 1).to(device)
opt = torch.optim.SGD(model.parameters(), lr=0.05)
for step in range(6):
    with torch_xla.step():
        x = torch.randn(4, 8).to(device)
        opt.zero_grad()
        loss = model(x).pow(2).mean()
        loss.backward()
        opt.step()
print(loss.item())
