"""Linear probing of a frozen backbone: a forward hook on the chosen block stores its output and
raises `StopForward`, so the compiled backbone does not run the layers after it; the probe is
trained on the stored features."""
import torch
import torch.nn as nn

torch.manual_seed(0)


class StopForward(Exception):
    pass


features = {}


def keep_and_stop(module, inputs, output):
    features["probe"] = output
    raise StopForward


backbone = nn.Sequential(*[nn.Sequential(nn.Linear(32, 32), nn.GELU()) for _ in range(6)])
backbone.requires_grad_(False)
backbone[3].register_forward_hook(keep_and_stop)
cbackbone = torch.compile(backbone)

probe = nn.Linear(32, 5)
opt = torch.optim.SGD(probe.parameters(), lr=0.1)
for step in range(4):
    x, y = torch.randn(16, 32), torch.randint(0, 5, (16,))
    try:
        cbackbone(x)
    except StopForward:
        pass
    loss = nn.functional.cross_entropy(probe(features["probe"]), y)
    loss.backward()
    opt.step()
    opt.zero_grad()
print(f"probe loss {loss.item():.4f}")
