# SPMD on one device: xr.use_spmd(), a 1-device mesh, MpDeviceLoader with input_sharding, and
# mark_sharding on a weight; step closures every second step. With --eager, in eager mode.
# calibrate-args:
# calibrate-args: --eager
import sys

import numpy as np
import torch
import torch_xla
import torch_xla.core.xla_model as xm
import torch_xla.distributed.parallel_loader as pl
import torch_xla.distributed.spmd as xs
import torch_xla.utils.utils as xu
from torch_xla import runtime as xr

xr.use_spmd()
if "--eager" in sys.argv:
    torch_xla.experimental.eager_mode(True)
n = xr.global_runtime_device_count()
device = torch_xla.device()
torch.manual_seed(0)
model = torch.nn.Sequential(torch.nn.Embedding(50, 16), torch.nn.Linear(16, 50)).to(device)
opt = torch.optim.Adam(model.parameters(), lr=1e-3)
data = xu.SampleGenerator(data=(torch.zeros(4, 8, dtype=torch.int64),
                                torch.zeros(4, 8, dtype=torch.int64)), sample_count=5)
mesh = xs.Mesh(np.arange(n), (n,), ("data",))
xs.mark_sharding(model[1].weight, mesh, ("data", None))
loader = pl.MpDeviceLoader(data, device, input_sharding=xs.ShardingSpec(mesh, ("data", None)))
for step, (x, y) in enumerate(loader):
    opt.zero_grad()
    loss = torch.nn.functional.cross_entropy(model(x).view(-1, 50), y.view(-1))
    loss.backward()
    opt.step()
    if step % 2 == 0:
        xm.add_step_closure(lambda l: print("loss", l.item()), args=(loss,))
xm.wait_device_ops()
