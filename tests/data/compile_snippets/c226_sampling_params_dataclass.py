"""Serving a small language model: each request carries its own sampling parameters, and one
compiled function turns the last position's logits into the next token."""
from dataclasses import dataclass

import torch
import torch.nn as nn

torch.manual_seed(0)
VOCAB = 64


@dataclass
class SamplingParams:
    temperature: float = 1.0
    top_k: int = 20


class TinyLM(nn.Module):
    def __init__(self, dim=32):
        super().__init__()
        self.embed = nn.Embedding(VOCAB, dim)
        self.mix = nn.Linear(dim, dim)
        self.out = nn.Linear(dim, VOCAB)

    def forward(self, ids):
        h = self.embed(ids).cumsum(dim=1) / torch.arange(1, ids.shape[1] + 1).view(1, -1, 1)
        return self.out(torch.tanh(self.mix(h)))


lm = TinyLM().eval()


@torch.compile
def next_token(ids, params):
    logits = lm(ids)[:, -1] / params.temperature
    top = logits.topk(params.top_k, dim=-1)
    choice = torch.multinomial(top.values.softmax(-1), 1)
    return top.indices.gather(-1, choice)


requests = [SamplingParams(temperature=0.5 + 0.1 * i) for i in range(10)]
with torch.no_grad():
    for params in requests:
        ids = torch.randint(0, VOCAB, (1, 8))
        for _ in range(3):
            ids = torch.cat([ids[:, 1:], next_token(ids, params)], dim=1)
print("last request", ids.tolist())
