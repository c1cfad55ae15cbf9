"""Greedy decoding with a GRU-cell decoder whose recurrent state is an immutable
namedtuple (hidden state, last token, step counter), updated functionally each step by
a compiled decode step."""
from collections import namedtuple

import torch
import torch.nn as nn

torch.manual_seed(0)
DecodeState = namedtuple("DecodeState", ["hidden", "token", "step"])

emb = nn.Embedding(40, 24)
cell = nn.GRUCell(24, 24)
proj = nn.Linear(24, 40)


@torch.compile
def decode_step(state):
    h = cell(emb(state.token), state.hidden)
    next_tok = proj(h).argmax(-1)
    return state._replace(hidden=h, token=next_tok, step=state.step + 1)


state = DecodeState(torch.zeros(3, 24), torch.tensor([1, 2, 3]), 0)
tokens = []
with torch.no_grad():
    for _ in range(8):
        state = decode_step(state)
        tokens.append(state.token)
print(torch.stack(tokens, 1), state.step)
