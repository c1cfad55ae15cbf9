# Beam search for a small GRU decoder on PyTorch/XLA. One compiled beam step scores every
# (beam, token) pair, takes the top beams over the flattened scores, splits the flat index into
# source beam and token with floor division, and reorders the hidden state with index_select.
import torch
import torch.nn as nn
import torch_xla.core.xla_model as xm

torch.manual_seed(0)

VOCAB, BEAMS, MAX_LEN, BOS = 50, 4, 8, 1
device = xm.xla_device()


class Decoder(nn.Module):
    def __init__(self, dim=32):
        super().__init__()
        self.embed = nn.Embedding(VOCAB, dim)
        self.cell = nn.GRUCell(dim, dim)
        self.head = nn.Linear(dim, VOCAB)

    def forward(self, tokens, h):
        h = self.cell(self.embed(tokens), h)
        return self.head(h).log_softmax(-1), h


decoder = Decoder().to(device).eval()


@torch.compile(backend="openxla")
def beam_step(tokens, h, beam_scores):
    log_probs, h = decoder(tokens, h)
    scores = (beam_scores[:, None] + log_probs).flatten()
    top_scores, flat_idx = scores.topk(BEAMS)
    beam_idx = torch.div(flat_idx, VOCAB, rounding_mode="floor")
    next_tokens = flat_idx % VOCAB
    return next_tokens, beam_idx, top_scores, h.index_select(0, beam_idx)


with torch.no_grad():
    tokens = torch.full((BEAMS,), BOS, device=device)
    h = torch.zeros(BEAMS, 32, device=device)
    beam_scores = torch.tensor([0.0] + [float("-inf")] * (BEAMS - 1), device=device)
    history = torch.empty(BEAMS, 0, dtype=torch.long, device=device)
    for _ in range(MAX_LEN):
        tokens, beam_idx, beam_scores, h = beam_step(tokens, h, beam_scores)
        history = torch.cat([history.index_select(0, beam_idx), tokens[:, None]], dim=1)
        xm.mark_step()
print(history[0].tolist(), beam_scores[0].item())
