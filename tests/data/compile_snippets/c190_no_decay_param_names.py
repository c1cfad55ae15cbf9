"""PyTorch/XLA training with an explicit L2 penalty: the compiled loss walks the model's named
parameters and skips biases and normalization weights by name, the usual "no decay" rule."""
import torch
import torch.nn as nn
import torch_xla

torch.manual_seed(0)
device = torch_xla.device()


class Regressor(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(20, 64)
        self.norm = nn.LayerNorm(64)
        self.fc2 = nn.Linear(64, 1)

    def forward(self, x):
        return self.fc2(self.norm(self.fc1(x)).relu())


NO_DECAY = ("bias", "norm.weight")
model = Regressor().to(device)
opt = torch.optim.SGD(model.parameters(), lr=0.01)


def loss_with_l2(x, y, weight_decay=1e-4):
    loss = nn.functional.mse_loss(model(x), y)
    l2 = sum(p.pow(2).sum() for name, p in model.named_parameters()
             if not any(name.endswith(s) for s in NO_DECAY))
    return loss + weight_decay * l2


closs = torch_xla.compile(loss_with_l2)
for step in range(4):
    x, y = torch.randn(16, 20, device=device), torch.randn(16, 1, device=device)
    loss = closs(x, y)
    loss.backward()
    opt.step()
    opt.zero_grad()
    torch_xla.sync()
print(f"loss {loss.item():.4f}")
