# A small CNN with BatchNorm2d: four training steps, then an evaluation pass in eval() mode (running
# statistics) every epoch; the accuracy is read with .item() after the pass.
import torch
import torch_xla
import torch_xla.core.xla_model as xm

device = xm.xla_device()
torch.manual_seed(69)
model = torch.nn.Sequential(
    torch.nn.Conv2d(1, 4, 3, padding=1), torch.nn.BatchNorm2d(4), torch.nn.ReLU(),
    torch.nn.MaxPool2d(2), torch.nn.Flatten(), torch.nn.Linear(4 * 4 * 4, 3)).to(device)
opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
val_x, val_y = torch.randn(12, 1, 8, 8), torch.randint(0, 3, (12,))
for epoch in range(2):
    model.train()
    for step in range(4):
        x, y = torch.randn(6, 1, 8, 8).to(device), torch.randint(0, 3, (6,)).to(device)
        loss = torch.nn.functional.cross_entropy(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        xm.mark_step()
    model.eval()
    with torch.no_grad():
        pred = model(val_x.to(device)).argmax(dim=1)
        acc = (pred == val_y.to(device)).float().mean()
    print(f"epoch {epoch} val acc {acc.item():.3f}")
