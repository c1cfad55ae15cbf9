import torch
import torch.nn as nn

torch.manual_seed(0)
model = torch.compile(nn.Sequential(nn.Linear(10, 20), nn.Tanh(), nn.Linear(20, 2)))
opt = torch.optim.Adam(model.parameters(), lr=1e-3)

for step in range(30):
    x, y = torch.randn(16, 10), torch.randint(0, 2, (16,))
    loss = nn.functional.cross_entropy(model(x), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    if step % 10 == 0:
        print(f"step {step} loss {loss.item():.4f}")
