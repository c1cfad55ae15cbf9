"""`openxla` MLP whose activation is given in the experiment config as a formula string; the
model builder turns it into a function once with `exec` of a small `def` and stores it on the
module, and the compiled `forward` calls it between the layers."""
import torch
import torch.nn as nn
import torch.nn.functional as F

try:
    import torch_xla.core.xla_model as xm
    BACKEND, device = "openxla", xm.xla_device()
except ImportError:  # CPU run without torch_xla
    xm, BACKEND, device = None, "eager", torch.device("cpu")

torch.manual_seed(0)
CONFIG = {"activation": "x * torch.sigmoid(1.702 * x)", "dims": [20, 64, 64, 4]}


def build_activation(formula):
    namespace = {}
    exec(f"def act(x):\n    return {formula}\n", {"torch": torch}, namespace)
    return namespace["act"]


class FormulaMLP(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        dims = cfg["dims"]
        self.layers = nn.ModuleList(nn.Linear(a, b) for a, b in zip(dims, dims[1:]))
        self.act = build_activation(cfg["activation"])

    def forward(self, x):
        for layer in self.layers[:-1]:
            x = self.act(layer(x))
        return self.layers[-1](x)


model = FormulaMLP(CONFIG).to(device)
step_model = torch.compile(model, backend=BACKEND)
opt = torch.optim.Adam(model.parameters(), lr=1e-3)
for step in range(4):
    x = torch.randn(32, 20, device=device)
    y = torch.randint(0, 4, (32,), device=device)
    loss = F.cross_entropy(step_model(x), y)
    loss.backward()
    opt.step()
    opt.zero_grad()
    if xm is not None:
        xm.mark_step()
print(f"loss {loss.item():.4f}")
