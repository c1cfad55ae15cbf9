# Early stopping with patience: validation loss read each epoch, the best weights kept as a
# state_dict copy on the device, training stops after two epochs without improvement.
import copy

import torch
import torch_xla
import torch_xla.core.xla_model as xm

device = torch_xla.device()
torch.manual_seed(71)
model = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.ReLU(), torch.nn.Linear(8, 1)).to(device)
opt = torch.optim.Adam(model.parameters(), lr=0.05)
train = [(torch.randn(8, 4), torch.randn(8, 1)) for _ in range(3)]
val_x, val_y = torch.randn(16, 4).to(device), torch.randn(16, 1).to(device)
best, bad_epochs, best_state = float("inf"), 0, None
for epoch in range(10):
    model.train()
    for x, y in train:
        loss = torch.nn.functional.mse_loss(model(x.to(device)), y.to(device))
        opt.zero_grad()
        loss.backward()
        opt.step()
        xm.mark_step()
    model.eval()
    with torch.no_grad():
        val = torch.nn.functional.mse_loss(model(val_x), val_y).item()
    if val < best - 1e-3:
        best, bad_epochs = val, 0
        best_state = copy.deepcopy(model.state_dict())
    else:
        bad_epochs += 1
        if bad_epochs >= 2:
            print("early stop at epoch", epoch)
            break
print("best val", best)
