import torch
import torch.nn as nn

torch.manual_seed(0)

model = nn.Sequential(nn.Linear(20, 64), nn.SiLU(), nn.Linear(64, 10)).eval()
model = torch.compile(model, mode="reduce-overhead")

sizes = [32, 32, 32, 17, 32, 32, 5, 32, 9]
correct = 0
with torch.no_grad():
    for n in sizes:
        x, y = torch.randn(n, 20), torch.randint(0, 10, (n,))
        correct += (model(x).argmax(-1) == y).sum()
print(f"accuracy {correct.item() / sum(sizes):.3f}")
