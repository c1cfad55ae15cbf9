# A DataLoader without drop_last: the last batch is shorter and its graph compiles again.
import torch
import torch_xla
import torch_xla.core.xla_model as xm

device = torch_xla.device()
torch.manual_seed(0)
data = torch.utils.data.TensorDataset(torch.randn(22, 8), torch.randint(0, 3, (22,)))
loader = torch.utils.data.DataLoader(data, batch_size=5)
model = torch.nn.Linear(8, 3).to(device)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for epoch in range(2):
    for x, y in loader:
        x, y = x.to(device), y.to(device)
        opt.zero_grad()
        loss = torch.nn.functional.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        xm.mark_step()
print(loss.item())
