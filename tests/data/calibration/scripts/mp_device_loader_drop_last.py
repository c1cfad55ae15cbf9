# MpDeviceLoader over a DataLoader with drop_last=True.
import torch
import torch_xla
import torch_xla.core.xla_model as xm
import torch_xla.distributed.parallel_loader as pl

device = torch_xla.device()
torch.manual_seed(0)
data = torch.utils.data.TensorDataset(torch.randn(22, 8), torch.randint(0, 3, (22,)))
loader = torch.utils.data.DataLoader(data, batch_size=5, drop_last=True)
model = torch.nn.Linear(8, 3).to(device)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for epoch in range(2):
    for x, y in pl.MpDeviceLoader(loader, device):
        opt.zero_grad()
        loss = torch.nn.functional.cross_entropy(model(x), y)
        loss.backward()
        xm.optimizer_step(opt)
print(loss.item())
