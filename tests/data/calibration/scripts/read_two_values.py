# Two reads of two results in one step: loss and accuracy, each .item() before the marker.
import torch
import torch_xla
import torch_xla.core.xla_model as xm

device = torch_xla.device()
torch.manual_seed(0)
model = torch.nn.Linear(8, 3).to(device)
for step in range(5):
    x, y = torch.randn(6, 8).to(device), torch.randint(0, 3, (6,)).to(device)
    logits = model(x)
    loss = torch.nn.functional.cross_entropy(logits, y)
    acc = (logits.argmax(1) == y).float().mean()
    print(loss.item(), acc.item())
    xm.mark_step()
