# Code written for several TPU cores run on one device: the loss is all-reduced before logging
# and the epoch's accuracy goes through xm.mesh_reduce.
import numpy as np
import torch
import torch_xla
import torch_xla.core.xla_model as xm
import torch_xla.runtime as xr

device = xm.xla_device()
torch.manual_seed(11)
model = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.ReLU(),
                            torch.nn.Linear(16, 2)).to(device)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
data = [(torch.randn(8, 8), torch.randint(0, 2, (8,))) for _ in range(6)]

for epoch in range(2):
    correct = torch.zeros((), device=device)
    for step, (x, y) in enumerate(data):
        x, y = x.to(device), y.to(device)
        out = model(x)
        loss = torch.nn.functional.cross_entropy(out, y)
        opt.zero_grad()
        loss.backward()
        xm.optimizer_step(opt)
        correct += (out.argmax(1) == y).sum()
        if step % 2 == 1:
            reduced = xm.all_reduce(xm.REDUCE_SUM, loss) / xr.world_size()
            print(epoch, step, reduced.item())
    accuracy = correct.item() / (len(data) * 8)
    print("epoch", epoch, "accuracy", xm.mesh_reduce("accuracy", accuracy, np.mean))
