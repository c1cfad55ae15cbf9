"""Multi-task training on PyTorch/XLA: batches come from different datasets that label different
subsets of the heads, so each batch carries a dict of targets and a matching dict of loss weights
for the tasks it actually has."""
import torch
import torch.nn as nn
import torch_xla

torch.manual_seed(0)
device = torch_xla.device()


class MultiTaskNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.trunk = nn.Sequential(nn.Linear(16, 32), nn.ReLU())
        self.heads = nn.ModuleDict({"depth": nn.Linear(32, 1), "normals": nn.Linear(32, 3),
                                    "segment": nn.Linear(32, 5)})

    def forward(self, x):
        h = self.trunk(x)
        return {name: head(h) for name, head in self.heads.items()}


model = MultiTaskNet().to(device)
opt = torch.optim.Adam(model.parameters(), lr=1e-3)


def weighted_loss(x, targets, weights):
    outputs = model(x)
    total = 0.0
    for task, weight in weights.items():
        if task == "segment":
            total = total + weight * nn.functional.cross_entropy(outputs[task], targets[task])
        else:
            total = total + weight * nn.functional.mse_loss(outputs[task], targets[task])
    return total


closs = torch.compile(weighted_loss, backend="openxla")
datasets = [("depth",), ("depth", "normals"), ("segment",), ("depth", "normals", "segment")]
for step in range(8):
    tasks = datasets[step % len(datasets)]
    x = torch.randn(8, 16, device=device)
    targets = {"depth": torch.randn(8, 1, device=device), "normals": torch.randn(8, 3, device=device),
               "segment": torch.randint(0, 5, (8,), device=device)}
    targets = {t: targets[t] for t in tasks}
    weights = {t: 1.0 for t in tasks}
    loss = closs(x, targets, weights)
    loss.backward()
    opt.step()
    opt.zero_grad()
    torch_xla.sync()
print(f"loss {loss.item():.4f}")
