# torch.manual_seed(epoch) at the start of every epoch (for reproducible shuffling and dropout),
# dropout drawing its mask on the device; the loss read at the end of each epoch.
import torch
import torch_xla
import torch_xla.core.xla_model as xm

device = xm.xla_device()
torch.manual_seed(70)
model = torch.nn.Sequential(torch.nn.Linear(6, 24), torch.nn.ReLU(), torch.nn.Dropout(0.25),
                            torch.nn.Linear(24, 2)).to(device)
opt = torch.optim.RMSprop(model.parameters(), lr=1e-3)
data_x, data_y = torch.randn(24, 6), torch.randint(0, 2, (24,))
for epoch in range(3):
    torch.manual_seed(epoch)
    order = torch.randperm(24)
    model.train()
    for i in range(0, 24, 8):
        idx = order[i:i + 8]
        x, y = data_x[idx].to(device), data_y[idx].to(device)
        loss = torch.nn.functional.cross_entropy(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        xm.mark_step()
    print(f"epoch {epoch} loss {loss.item():.4f}")
