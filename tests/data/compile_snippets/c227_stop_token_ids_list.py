"""Serving a small language model: each request carries its own sampling parameters, including
the token ids that end it, and one compiled function picks the next token and reports which
sequences are finished."""
from dataclasses import dataclass, field

import torch
import torch.nn as nn

torch.manual_seed(0)
VOCAB = 64


@dataclass
class SamplingParams:
    temperature: float = 1.0
    stop_token_ids: list = field(default_factory=lambda: [0])


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
    token = torch.multinomial(logits.softmax(-1), 1)
    finished = torch.isin(token, torch.tensor(params.stop_token_ids))
    return token, finished


requests = [SamplingParams(stop_token_ids=list(range(i + 1))) for i in range(10)]
with torch.no_grad():
    for params in requests:
        ids = torch.randint(1, VOCAB, (2, 8))
        for _ in range(3):
            token, finished = next_token(ids, params)
            ids = torch.cat([ids[:, 1:], token], dim=1)
print("last request", ids.tolist(), finished.tolist())
