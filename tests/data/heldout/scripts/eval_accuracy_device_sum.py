# Evaluation: correct predictions summed on the device, read once at the end; last batch short.
import torch
import torch_xla
import torch_xla.core.xla_model as xm

device = torch_xla.device()
torch.manual_seed(2)
model = torch.nn.Linear(10, 5).to(device)
model.eval()
data = torch.randn(35, 10)
target = torch.randint(0, 5, (35,))
correct = torch.zeros((), dtype=torch.long, device=device)
total = 0
with torch.no_grad():
    for i in range(0, 35, 8):
        x = data[i:i + 8].to(device)
        y = target[i:i + 8].to(device)
        pred = model(x).argmax(dim=1)
        correct += pred.eq(y).sum()
        total += y.shape[0]
        xm.mark_step()
print(f"accuracy {100.0 * correct.item() / total:.1f}%")
