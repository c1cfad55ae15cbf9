"""`openxla` FreezeOut-style progressive freezing of a residual MLP: at the start of each epoch the
trainer adds the next block's index to the model's `frozen` set, and the compiled `forward` cuts
the graph after every frozen block with `x.detach()` (`if i in self.frozen:`), so the backward pass
stops there and the early blocks stop training one by one."""
import torch
import torch.nn as nn
import torch.nn.functional as F

try:
    import torch_xla.core.xla_model as xm
    BACKEND, device = "openxla", xm.xla_device()
except ImportError:  # CPU run without PyTorch/XLA
    xm, BACKEND, device = None, "eager", torch.device("cpu")

torch.manual_seed(0)
DEPTH, DIM = 6, 64


class ResidualMLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.blocks = nn.ModuleList(nn.Sequential(nn.LayerNorm(DIM), nn.Linear(DIM, DIM), nn.GELU())
                                    for _ in range(DEPTH))
        self.head = nn.Linear(DIM, 10)
        self.frozen = set()

    def forward(self, x):
        for i, block in enumerate(self.blocks):
            x = x + block(x)
            if i in self.frozen:
                x = x.detach()
        return self.head(x)


model = ResidualMLP().to(device)
compiled = torch.compile(model, backend=BACKEND)
opt = torch.optim.SGD(model.parameters(), lr=0.05)
for epoch in range(5):
    if epoch > 0:
        model.frozen.add(epoch - 1)
    for it in range(2):
        x, y = torch.randn(16, DIM).to(device), torch.randint(0, 10, (16,)).to(device)
        loss = F.cross_entropy(compiled(x), y)
        loss.backward()
        opt.step()
        opt.zero_grad()
        if xm is not None:
            xm.mark_step()
print(f"frozen {sorted(model.frozen)} loss {loss.item():.4f}")
