# Training steps, then an evaluation loop under torch.no_grad with model.eval().
import torch
import torch_xla
import torch_xla.core.xla_model as xm

device = torch_xla.device()
torch.manual_seed(0)
model = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.Dropout(0.2), torch.nn.Linear(16, 3)).to(device)
opt = torch.optim.SGD(model.parameters(), lr=0.05)
for step in range(4):
    x, y = torch.randn(6, 8).to(device), torch.randint(0, 3, (6,)).to(device)
    opt.zero_grad()
    torch.nn.functional.cross_entropy(model(x), y).backward()
    opt.step()
    xm.mark_step()
model.eval()
correct = 0
with torch.no_grad():
    for step in range(4):
        x, y = torch.randn(6, 8).to(device), torch.randint(0, 3, (6,)).to(device)
        correct += (model(x).argmax(1) == y).sum()
        xm.mark_step()
print(correct.item())
