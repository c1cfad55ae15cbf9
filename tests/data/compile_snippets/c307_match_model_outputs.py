# A shared training step for several model families: older models return a (logits, aux_loss)
# tuple, newer ones a ModelOutput dataclass, and some return bare logits. The loss helper
# dispatches on the shape of the output with structural pattern matching.
from dataclasses import dataclass
from typing import Optional

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


@dataclass
class ModelOutput:
    logits: torch.Tensor
    aux_loss: Optional[torch.Tensor] = None


class NewModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 4))

    def forward(self, x):
        logits = self.body(x)
        return ModelOutput(logits=logits, aux_loss=logits.pow(2).mean())


def split_output(out):
    match out:
        case ModelOutput(logits=logits, aux_loss=None):
            return logits, None
        case ModelOutput(logits=logits, aux_loss=aux):
            return logits, aux
        case (logits, aux):
            return logits, aux
        case _:
            return out, None


def loss_step(model, x, y):
    logits, aux = split_output(model(x))
    loss = F.cross_entropy(logits, y)
    if aux is not None:
        loss = loss + 0.01 * aux
    return loss


model = NewModel()
step_fn = torch.compile(loss_step)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for step in range(5):
    loss = step_fn(model, torch.randn(8, 16), torch.randint(0, 4, (8,)))
    loss.backward()
    opt.step()
    opt.zero_grad()
print(loss.item())
