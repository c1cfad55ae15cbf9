# Long-document extractive QA: the encoded document is scored window by window, and the loop
# hands the compiled span scorer each window as a Python slice object over the token axis,
# with a fixed window length and stride.
import torch
import torch.nn as nn

torch.manual_seed(0)

WINDOW, STRIDE = 64, 32


class SpanScorer(nn.Module):
    def __init__(self, dim=32):
        super().__init__()
        self.start = nn.Linear(dim, 1)
        self.end = nn.Linear(dim, 1)

    def forward(self, hidden, window):
        h = hidden[:, window]
        start_logits = self.start(h).squeeze(-1)
        end_logits = self.end(h).squeeze(-1)
        scores = start_logits[:, :, None] + end_logits[:, None, :]
        valid = torch.ones(h.shape[1], h.shape[1], dtype=torch.bool).triu().tril(15)
        return scores.masked_fill(~valid, float("-inf")).flatten(1).max(dim=-1)


scorer = torch.compile(SpanScorer().eval())
encoder = nn.Embedding(1000, 32)
with torch.no_grad():
    for doc in range(2):
        hidden = encoder(torch.randint(0, 1000, (1, 320)))
        best = []
        for start in range(0, hidden.shape[1] - WINDOW + 1, STRIDE):
            score, flat_index = scorer(hidden, slice(start, start + WINDOW))
            best.append((score, start, flat_index))
print(len(best))
