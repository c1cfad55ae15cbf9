# Training with dropout, an evaluation pass every third step in eval mode under no_grad.
import torch
import torch_xla
import torch_xla.core.xla_model as xm

device = torch_xla.device()
torch.manual_seed(18)
model = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.ReLU(), torch.nn.Dropout(0.2),
                            torch.nn.Linear(16, 3)).to(device)
opt = torch.optim.SGD(model.parameters(), lr=0.05)
val_x, val_y = torch.randn(6, 8).to(device), torch.randint(0, 3, (6,)).to(device)
for step in range(6):
    model.train()
    x, y = torch.randn(4, 8).to(device), torch.randint(0, 3, (4,)).to(device)
    loss = torch.nn.functional.cross_entropy(model(x), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    xm.mark_step()
    if step % 3 == 2:
        model.eval()
        with torch.no_grad():
            acc = (model(val_x).argmax(1) == val_y).float().mean()
        print(step, acc.item())
