"""Language-model training step that returns its results as an immutable record (loss,
token accuracy, logits) so the trainer can pass it around without anyone mutating it."""
from dataclasses import dataclass

import torch
import torch.nn as nn

torch.manual_seed(0)


@dataclass(frozen=True)
class StepOutput:
    loss: torch.Tensor
    accuracy: torch.Tensor
    logits: torch.Tensor


class TinyLM(nn.Module):
    def __init__(self, vocab=50, dim=32):
        super().__init__()
        self.emb = nn.Embedding(vocab, dim)
        self.mix = nn.Sequential(nn.Linear(dim, dim), nn.GELU())
        self.head = nn.Linear(dim, vocab)

    def forward(self, ids):
        return self.head(self.mix(self.emb(ids)))


lm = TinyLM()


@torch.compile
def step(ids, targets):
    logits = lm(ids)
    loss = nn.functional.cross_entropy(logits.flatten(0, 1), targets.flatten())
    acc = (logits.argmax(-1) == targets).float().mean()
    return StepOutput(loss=loss, accuracy=acc, logits=logits)


for _ in range(3):
    ids = torch.randint(0, 50, (4, 10))
    out = step(ids[:, :-1], ids[:, 1:])
    out.loss.backward()
print(out.accuracy)
