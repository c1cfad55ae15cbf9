# pl.ParallelLoader(...).per_device_loader(device) each epoch, 13 samples in batches of 4.
import torch
import torch_xla
import torch_xla.core.xla_model as xm
import torch_xla.distributed.parallel_loader as pl

device = torch_xla.device()
torch.manual_seed(17)
ds = torch.utils.data.TensorDataset(torch.randn(13, 5), torch.randn(13, 2))
loader = torch.utils.data.DataLoader(ds, batch_size=4, shuffle=True)
model = torch.nn.Linear(5, 2).to(device)
opt = torch.optim.Adam(model.parameters(), lr=1e-2)
for epoch in range(2):
    para = pl.ParallelLoader(loader, [device])
    for x, y in para.per_device_loader(device):
        opt.zero_grad()
        loss = torch.nn.functional.mse_loss(model(x), y)
        loss.backward()
        xm.optimizer_step(opt)
    print(epoch, loss.item())
