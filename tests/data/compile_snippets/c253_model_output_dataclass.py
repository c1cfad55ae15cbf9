"""A Hugging Face-style model whose forward returns a ModelOutput-like dataclass that is also an
OrderedDict (fields set in __post_init__, read by key or attribute), with the loss filled only
when labels are passed; the training step reads output["loss"]."""
from collections import OrderedDict
from dataclasses import dataclass, fields
from typing import Optional

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


@dataclass
class SequenceClassifierOutput(OrderedDict):
    logits: torch.Tensor = None
    loss: Optional[torch.Tensor] = None

    def __post_init__(self):
        for f in fields(self):
            value = getattr(self, f.name)
            if value is not None:
                self[f.name] = value


class Classifier(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = nn.Sequential(nn.Linear(32, 64), nn.GELU(), nn.LayerNorm(64))
        self.classifier = nn.Linear(64, 3)

    def forward(self, features, labels=None):
        logits = self.classifier(self.encoder(features))
        loss = F.cross_entropy(logits, labels) if labels is not None else None
        return SequenceClassifierOutput(logits=logits, loss=loss)


model = Classifier()
cmodel = torch.compile(model)
opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
for _ in range(5):
    output = cmodel(torch.randn(8, 32), labels=torch.randint(0, 3, (8,)))
    output["loss"].backward()
    opt.step()
    opt.zero_grad()
print(f"loss {output.loss.item():.4f}")
