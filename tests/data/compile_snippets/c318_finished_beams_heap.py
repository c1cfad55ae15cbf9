"""Beam-search decoding for a small seq2seq model: each compiled step scores the beams,
and when a beam emits the end token, a hypothesis bank object stores the finished
hypothesis (score and beam index) in a heap so that the best ones can be read at the end."""
import heapq

import torch
import torch.nn as nn

torch.manual_seed(0)
VOCAB, EOS, BEAMS = 20, 1, 4


class HypothesisBank:
    def __init__(self):
        self.heap = []

    def add(self, score, beam):
        heapq.heappush(self.heap, (-score, beam))


class Decoder(nn.Module):
    def __init__(self, dim=16):
        super().__init__()
        self.embed = nn.Embedding(VOCAB, dim)
        self.cell = nn.Linear(2 * dim, dim)
        self.out = nn.Linear(dim, VOCAB)

    def forward(self, tokens, state):
        state = torch.tanh(self.cell(torch.cat([self.embed(tokens), state], -1)))
        return self.out(state).log_softmax(-1), state


decoder = Decoder().eval()
bank = HypothesisBank()


@torch.compile
def beam_step(tokens, state, scores):
    logp, state = decoder(tokens, state)
    eos_scores = scores + logp[:, EOS]
    best_score, best_beam = eos_scores.max(0)
    bank.add(best_score, best_beam)
    scores, tokens = (scores[:, None] + logp).max(-1)
    return tokens, state, scores


tokens = torch.zeros(BEAMS, dtype=torch.long)
state = torch.zeros(BEAMS, 16)
scores = torch.zeros(BEAMS)
with torch.no_grad():
    for _ in range(5):
        tokens, state, scores = beam_step(tokens, state, scores)
print(len(bank.heap))
