"""Deep-ensemble uncertainty on an XLA device: five small regressors are stacked into one set
of batched weights with torch.func.stack_module_state, and a torch_xla.compile'd function
evaluates all members at once with vmap over functional_call."""
import copy

import torch
import torch.nn as nn
import torch_xla
from torch.func import functional_call, stack_module_state, vmap

torch.manual_seed(0)


def make_member():
    return nn.Sequential(nn.Linear(8, 32), nn.ReLU(), nn.Linear(32, 1))


members = [make_member() for _ in range(5)]
params, buffers = stack_module_state(members)
skeleton = copy.deepcopy(members[0]).to("meta")


def member_forward(p, b, x):
    return functional_call(skeleton, (p, b), (x,))


def ensemble_predict(params, buffers, x):
    preds = vmap(member_forward, in_dims=(0, 0, None))(params, buffers, x)
    return preds.mean(0), preds.std(0)


predict = torch_xla.compile(ensemble_predict)
with torch.no_grad():
    for _ in range(3):
        mean, std = predict(params, buffers, torch.randn(16, 8))
        torch_xla.sync()
print(mean.shape, std.mean())
