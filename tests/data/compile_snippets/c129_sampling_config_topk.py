"""Serve sampling requests from a tiny language model, each with its own generation settings.

Requests carry a GenerationConfig (top-k and temperature); the sampling step for the next token
is compiled and takes the config object as it is.
"""
import dataclasses

import torch
import torch.nn as nn

torch.manual_seed(0)
VOCAB = 200


@dataclasses.dataclass
class GenerationConfig:
    top_k: int = 50
    temperature: float = 1.0
    max_new_tokens: int = 6


lm = nn.Sequential(nn.Embedding(VOCAB, 32), nn.Linear(32, VOCAB)).eval()


@torch.compile
def next_token(last_tokens, cfg):
    logits = lm(last_tokens)[:, -1] / cfg.temperature
    top_vals, top_idx = torch.topk(logits, cfg.top_k, dim=-1)
    choice = torch.multinomial(top_vals.softmax(-1), 1)
    return top_idx.gather(-1, choice)


requests = [GenerationConfig(top_k=k, temperature=t)
            for k, t in [(50, 1.0), (10, 0.7), (20, 0.9), (40, 1.2), (5, 0.5), (80, 1.0)]]
with torch.no_grad():
    for cfg in requests:
        prompt = torch.randint(0, VOCAB, (2, 4))
        last, generated = prompt[:, -1:].contiguous(), []
        for _ in range(cfg.max_new_tokens):
            last = next_token(last, cfg)
            generated.append(last)
        print(cfg.top_k, torch.cat(generated, dim=1)[0].tolist())
