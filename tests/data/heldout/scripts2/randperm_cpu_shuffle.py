# Shuffling by hand: torch.randperm on the CPU each epoch, the permutation moved to the device
# and used to gather minibatches from a dataset that lives on the device.
import torch
import torch_xla
import torch_xla.core.xla_model as xm

device = xm.xla_device()
torch.manual_seed(43)
n, batch = 24, 6
features = torch.randn(n, 5).to(device)
targets = torch.randn(n, 1).to(device)
model = torch.nn.Sequential(torch.nn.Linear(5, 8), torch.nn.ReLU(), torch.nn.Linear(8, 1)).to(device)
opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
for epoch in range(3):
    perm = torch.randperm(n).to(device)
    for i in range(0, n, batch):
        idx = perm[i:i + batch]
        loss = torch.nn.functional.mse_loss(model(features[idx]), targets[idx])
        opt.zero_grad()
        loss.backward()
        opt.step()
        xm.mark_step()
    print("epoch", epoch, "loss", loss.item())
