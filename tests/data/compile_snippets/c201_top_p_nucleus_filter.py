"""Sampling step of a text generator: temperature, then nucleus (top-p) filtering by sorting the
probabilities, masking everything past the cumulative threshold and scattering back."""
import torch
import torch.nn as nn

torch.manual_seed(0)
VOCAB = 64


class LM(nn.Module):
    def __init__(self, dim=32):
        super().__init__()
        self.embed = nn.Embedding(VOCAB, dim)
        self.out = nn.Linear(dim, VOCAB)

    def forward(self, ids):
        return self.out(torch.cumsum(self.embed(ids), dim=1))


def top_p_filter(logits, top_p):
    sorted_logits, sorted_idx = torch.sort(logits, descending=True, dim=-1)
    cum = sorted_logits.softmax(-1).cumsum(-1)
    remove = cum - sorted_logits.softmax(-1) > top_p
    sorted_logits = sorted_logits.masked_fill(remove, float("-inf"))
    return torch.empty_like(logits).scatter_(-1, sorted_idx, sorted_logits)


model = LM().eval()


@torch.no_grad()
def next_token(ids, temperature, top_p):
    logits = model(ids)[:, -1] / temperature
    probs = top_p_filter(logits, top_p).softmax(-1)
    return torch.multinomial(probs, 1)


sample = torch.compile(next_token)
ids = torch.randint(0, VOCAB, (2, 6))
for _ in range(6):
    ids = torch.cat([ids, sample(ids, 0.8, 0.9)], dim=1)
print(ids.tolist())
