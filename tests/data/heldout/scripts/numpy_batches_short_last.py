# Batches cut from numpy arrays with torch.from_numpy(...).to(device); the last batch is short.
import numpy as np
import torch
import torch_xla
import torch_xla.core.xla_model as xm

device = torch_xla.device()
torch.manual_seed(14)
rng = np.random.default_rng(0)
features = rng.standard_normal((23, 6)).astype(np.float32)
targets = rng.standard_normal((23, 1)).astype(np.float32)
model = torch.nn.Linear(6, 1).to(device)
opt = torch.optim.Adagrad(model.parameters(), lr=0.1)
for epoch in range(2):
    perm = rng.permutation(23)
    for i in range(0, 23, 10):
        idx = perm[i:i + 10]
        x = torch.from_numpy(features[idx]).to(device)
        y = torch.from_numpy(targets[idx]).to(device)
        loss = torch.nn.functional.smooth_l1_loss(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        xm.mark_step()
    print(epoch, loss.item())
