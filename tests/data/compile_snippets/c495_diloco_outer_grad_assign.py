"""DiLoCo-style local-SGD training: a worker copy of the model takes a few inner AdamW steps,
then a compiled `set_outer_grads` helper writes each global parameter's pseudo-gradient,
`p.grad = p.detach() - local.detach()`, and an outer Nesterov SGD step moves the global model;
the worker is reloaded from it for the next round."""
import copy

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
global_model = nn.Sequential(nn.Linear(16, 64), nn.GELU(), nn.Linear(64, 4))
worker = copy.deepcopy(global_model)
outer_opt = torch.optim.SGD(global_model.parameters(), lr=0.7, momentum=0.9, nesterov=True)
inner_opt = torch.optim.AdamW(worker.parameters(), lr=1e-3)


@torch.compile
def set_outer_grads(global_params, local_params):
    for p, local in zip(global_params, local_params):
        p.grad = p.detach() - local.detach()


for round_ in range(4):
    for inner_step in range(5):
        x, y = torch.randn(32, 16), torch.randint(0, 4, (32,))
        loss = F.cross_entropy(worker(x), y)
        loss.backward()
        inner_opt.step()
        inner_opt.zero_grad()
    set_outer_grads(list(global_model.parameters()), list(worker.parameters()))
    outer_opt.step()
    outer_opt.zero_grad()
    worker.load_state_dict(global_model.state_dict())
    print(round_, f"loss {loss.item():.4f}")
