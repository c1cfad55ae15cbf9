"""Gaudi (`hpu_backend`) text-generation server: each request brings its own sampling settings,
and the compiled sampling head applies the request's `top_k` (the API's convention: `0` turns
top-k filtering off, `1` is greedy decoding) before drawing the next token from a small decoder's
last hidden state."""
import torch
import torch.nn as nn

try:
    import habana_frameworks.torch.core as htcore
    BACKEND = "hpu_backend"
except ImportError:  # CPU run without the Gaudi stack
    htcore = None
    BACKEND = "eager"

torch.manual_seed(0)
VOCAB = 128


class SamplingHead(nn.Module):
    def __init__(self, dim=32):
        super().__init__()
        self.norm = nn.LayerNorm(dim)
        self.lm_head = nn.Linear(dim, VOCAB, bias=False)

    def forward(self, hidden, top_k, temperature):
        logits = self.lm_head(self.norm(hidden[:, -1])) / temperature
        if top_k > 0:
            k = min(top_k, logits.size(-1))
            kth = torch.topk(logits, k).values[:, -1:]
            logits = logits.masked_fill(logits < kth, float("-inf"))
        return torch.multinomial(torch.softmax(logits, -1), 1)


head = SamplingHead().eval()
sample = torch.compile(head, backend=BACKEND)
requests = [(50, 0.8), (1, 1.0), (40, 0.7), (0, 1.0), (20, 0.9), (1, 1.0), (50, 0.6)]
with torch.no_grad():
    for top_k, temperature in requests:
        hidden = torch.randn(4, 6, 32)
        tokens = sample(hidden, top_k, temperature)
        if htcore is not None:
            htcore.mark_step()
        print(top_k, tokens.squeeze(-1).tolist())
