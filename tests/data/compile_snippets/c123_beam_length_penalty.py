"""Beam search over a tiny GRU language model with a GNMT-style length penalty.

Each decoding step (scores, top-k over beams x vocabulary, reordering of the hidden state) is
one compiled function; the current length is passed in to normalise the beam scores.
"""
import torch
import torch.nn as nn

torch.manual_seed(0)
VOCAB, HID, BEAMS = 40, 32, 4

emb = nn.Embedding(VOCAB, HID)
cell = nn.GRUCell(HID, HID)
out = nn.Linear(HID, VOCAB)


@torch.compile
def beam_step(beam_scores, last_tokens, hidden, cur_len: int, alpha: float = 0.6):
    hidden = cell(emb(last_tokens), hidden)
    logp = out(hidden).log_softmax(-1)
    total = beam_scores[:, None] + logp
    penalty = ((5 + cur_len) / 6) ** alpha
    best, flat_idx = (total / penalty).view(-1).topk(BEAMS)
    beam_idx = flat_idx // VOCAB
    tokens = flat_idx % VOCAB
    return best * penalty, tokens, hidden.index_select(0, beam_idx), beam_idx


with torch.no_grad():
    scores = torch.zeros(BEAMS)
    scores[1:] = float("-inf")
    tokens = torch.zeros(BEAMS, dtype=torch.long)
    hidden = torch.zeros(BEAMS, HID)
    history = []
    for cur_len in range(1, 13):
        scores, tokens, hidden, beam_idx = beam_step(scores, tokens, hidden, cur_len)
        history = [h.index_select(0, beam_idx) for h in history] + [tokens]
print(torch.stack(history, dim=1)[0], scores)
