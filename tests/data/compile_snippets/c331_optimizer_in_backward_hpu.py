"""Memory-saving fine-tuning on Gaudi with the optimizer step fused into the backward pass:
each parameter gets its own optimizer and a post-accumulate-grad hook that steps and zeroes
it as soon as its gradient is ready; the forward is a compiled model."""
import torch
import torch.nn as nn
import torch.nn.functional as F
import habana_frameworks.torch.core as htcore

torch.manual_seed(0)


class Net(nn.Module):
    def __init__(self, dim=32, n_cls=5):
        super().__init__()
        self.layers = nn.Sequential(nn.Linear(dim, 64), nn.GELU(), nn.Linear(64, 64), nn.GELU())
        self.head = nn.Linear(64, n_cls)

    def forward(self, x):
        return self.head(self.layers(x))


def attach_optimizer_in_backward(model, lr):
    optimizers = {p: torch.optim.AdamW([p], lr=lr) for p in model.parameters()}

    def step_param(p):
        optimizers[p].step()
        optimizers[p].zero_grad()

    for p in model.parameters():
        p.register_post_accumulate_grad_hook(step_param)
    return optimizers


model = Net()
optimizers = attach_optimizer_in_backward(model, lr=1e-3)
compiled = torch.compile(model, backend="hpu_backend")
for _ in range(4):
    x, y = torch.randn(16, 32), torch.randint(0, 5, (16,))
    loss = F.cross_entropy(compiled(x), y)
    loss.backward()
    htcore.mark_step()
print(loss)
