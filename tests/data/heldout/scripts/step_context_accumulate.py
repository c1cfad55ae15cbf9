# torch_xla.step() around two micro-batches of gradient accumulation and the optimizer step.
import torch
import torch_xla

device = torch_xla.device()
torch.manual_seed(13)
model = torch.nn.Linear(5, 3).to(device)
opt = torch.optim.RMSprop(model.parameters(), lr=1e-3)
for step in range(4):
    with torch_xla.step():
        opt.zero_grad()
        for micro in range(2):
            x = torch.randn(2, 5).to(device)
            loss = model(x).pow(2).mean() / 2
            loss.backward()
        opt.step()
print(loss.item())
