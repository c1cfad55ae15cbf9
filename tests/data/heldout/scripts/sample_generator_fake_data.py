# Fake data as PyTorch/XLA's MNIST test makes it: xu.SampleGenerator of device-free tensors,
# wrapped in MpDeviceLoader, Adam, the loss read at the end.
import torch
import torch_xla
import torch_xla.core.xla_model as xm
import torch_xla.distributed.parallel_loader as pl
import torch_xla.utils.utils as xu

device = torch_xla.device()
torch.manual_seed(20)
train = xu.SampleGenerator(data=(torch.zeros(4, 1, 8, 8), torch.zeros(4, dtype=torch.int64)),
                           sample_count=5)
model = torch.nn.Sequential(torch.nn.Conv2d(1, 4, 3), torch.nn.ReLU(), torch.nn.Flatten(),
                            torch.nn.Linear(144, 10)).to(device)
opt = torch.optim.Adam(model.parameters(), lr=1e-3)
for x, y in pl.MpDeviceLoader(train, device):
    opt.zero_grad()
    loss = torch.nn.functional.cross_entropy(model(x), y)
    loss.backward()
    xm.optimizer_step(opt)
print(loss.item())
