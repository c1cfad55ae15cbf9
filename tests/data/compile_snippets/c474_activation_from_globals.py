"""Architecture search over feed-forward activations: the block's activation is named in the
config (`"swiglu"`, `"geglu"`, `"relu2"`) and `forward` resolves the name to one of the module's
activation functions through `globals()[self.cfg["activation"]]` at each call."""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


def swiglu(x):
    a, b = x.chunk(2, dim=-1)
    return F.silu(a) * b


def geglu(x):
    a, b = x.chunk(2, dim=-1)
    return F.gelu(a) * b


def relu2(x):
    a, _ = x.chunk(2, dim=-1)
    return F.relu(a) ** 2


class FeedForward(nn.Module):
    def __init__(self, cfg, dim=32):
        super().__init__()
        self.cfg = cfg
        self.up = nn.Linear(dim, 4 * dim)
        self.down = nn.Linear(2 * dim, dim)

    def forward(self, x):
        act = globals()[self.cfg["activation"]]
        return x + self.down(act(self.up(x)))


model = nn.Sequential(FeedForward({"activation": "swiglu"}), FeedForward({"activation": "swiglu"}),
                      nn.Linear(32, 4))
step_model = torch.compile(model)
opt = torch.optim.Adam(model.parameters(), lr=1e-3)
for step in range(5):
    x, y = torch.randn(16, 32), torch.randn(16, 4)
    loss = F.mse_loss(step_model(x), y)
    loss.backward()
    opt.step()
    opt.zero_grad()
print(f"loss {loss.item():.4f}")
