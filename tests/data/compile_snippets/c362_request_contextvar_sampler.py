"""Async serving: the request handler puts the request's sampling settings in a ContextVar
with a context manager, and the model's sampling head reads the temperature from it."""
import contextlib
import contextvars
from dataclasses import dataclass

import torch
import torch.nn as nn

torch.manual_seed(0)


@dataclass
class SamplingParams:
    temperature: float = 1.0
    top_k: int = 50


_current_request = contextvars.ContextVar("current_request", default=SamplingParams())


@contextlib.contextmanager
def request_scope(params):
    token = _current_request.set(params)
    try:
        yield
    finally:
        _current_request.reset(token)


class SamplingHead(nn.Module):
    def __init__(self, dim, vocab):
        super().__init__()
        self.proj = nn.Linear(dim, vocab)

    def forward(self, h):
        params = _current_request.get()
        return torch.softmax(self.proj(h) / params.temperature, dim=-1)


class TinyLM(nn.Module):
    def __init__(self, vocab=256, dim=64):
        super().__init__()
        self.embed = nn.Embedding(vocab, dim)
        self.mix = nn.Linear(dim, dim)
        self.head = SamplingHead(dim, vocab)

    def forward(self, ids):
        h = torch.tanh(self.mix(self.embed(ids).mean(1)))
        return self.head(h)


model = torch.compile(TinyLM().eval())
requests = [SamplingParams(0.7), SamplingParams(1.0), SamplingParams(0.2), SamplingParams(0.7)]
with torch.no_grad():
    for params in requests:
        with request_scope(params):
            probs = model(torch.randint(0, 256, (2, 12)))
            print(torch.multinomial(probs, 1).squeeze(1).tolist())
