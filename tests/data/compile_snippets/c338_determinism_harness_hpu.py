"""Reproducibility check for a Gaudi model before a long run: the same compiled (hpu_backend)
regression head is trained for two steps from the same seed under three determinism settings
(the default, `torch.use_deterministic_algorithms(True)`, and the same with `warn_only=True`),
and the final losses of the settings are compared."""
import torch
import torch.nn as nn
import habana_frameworks.torch.core as htcore


class Head(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 1))

    def forward(self, x, y):
        return nn.functional.mse_loss(self.net(x).squeeze(-1), y)


def run_two_steps(compiled, model):
    torch.manual_seed(0)
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    for _ in range(2):
        loss = compiled(torch.randn(8, 16), torch.randn(8))
        loss.backward()
        opt.step()
        opt.zero_grad()
        htcore.mark_step()
    return loss.detach()


torch.manual_seed(0)
model = Head()
initial = {k: v.clone() for k, v in model.state_dict().items()}
compiled = torch.compile(model, backend="hpu_backend")
losses = {}
for name, kwargs in [("default", {"mode": False}), ("strict", {"mode": True}),
                     ("warn", {"mode": True, "warn_only": True})]:
    model.load_state_dict(initial)
    torch.use_deterministic_algorithms(**kwargs)
    losses[name] = run_two_steps(compiled, model)
torch.use_deterministic_algorithms(False)
print({k: round(float(v), 5) for k, v in losses.items()})
