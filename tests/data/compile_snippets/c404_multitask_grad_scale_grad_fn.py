"""Multi-task network that damps the auxiliary task's gradient into the shared trunk.

The auxiliary head's input goes through a `scale_gradient` helper: the forward value is
unchanged, the gradient reaching the trunk is multiplied by a factor. The helper returns its
input untouched when the tensor has no autograd history (evaluation under `no_grad`), which it
checks with `grad_fn`. The whole model is compiled and trained.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
AUX_GRAD_SCALE = 0.1


def scale_gradient(t, factor):
    if t.grad_fn is None:
        return t
    return t * factor + t.detach() * (1.0 - factor)


class MultiTaskNet(nn.Module):
    def __init__(self, dim=32):
        super().__init__()
        self.trunk = nn.Sequential(nn.Linear(24, dim), nn.ReLU(), nn.Linear(dim, dim), nn.ReLU())
        self.main_head = nn.Linear(dim, 6)
        self.aux_head = nn.Linear(dim, 1)

    def forward(self, x):
        h = self.trunk(x)
        return self.main_head(h), self.aux_head(scale_gradient(h, AUX_GRAD_SCALE)).squeeze(-1)


model = MultiTaskNet()
compiled = torch.compile(model)
opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
for step in range(4):
    x, y, depth = torch.randn(16, 24), torch.randint(0, 6, (16,)), torch.randn(16)
    logits, aux = compiled(x)
    loss = F.cross_entropy(logits, y) + F.mse_loss(aux, depth)
    loss.backward()
    opt.step()
    opt.zero_grad()
print(round(loss.item(), 3))
