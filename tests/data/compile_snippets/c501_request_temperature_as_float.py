"""Gaudi (`hpu_backend`) text-generation endpoint: each request's JSON body carries a sampling
`temperature` (some clients send `1`, most a float such as `0.7`, an internal batch job a 0-d
tensor); the handler normalizes it with `float(...)` before calling the compiled sampling head."""
import torch
import torch.nn as nn

try:
    import habana_frameworks.torch.core as htcore
    BACKEND = "hpu_backend"
except ImportError:  # CPU run without the Gaudi software stack
    htcore, BACKEND = None, "eager"

torch.manual_seed(0)


class SamplingHead(nn.Module):
    def __init__(self, dim=64, vocab=500):
        super().__init__()
        self.norm = nn.LayerNorm(dim)
        self.lm_head = nn.Linear(dim, vocab, bias=False)

    def forward(self, hidden, temperature):
        logits = self.lm_head(self.norm(hidden[:, -1]))
        probs = torch.softmax(logits / temperature, dim=-1)
        return torch.multinomial(probs, 1)


head = torch.compile(SamplingHead().eval(), backend=BACKEND)
requests = [{"temperature": 1}, {"temperature": 0.7}, {"temperature": torch.tensor(0.5)},
            {"temperature": 0.9}, {"temperature": 1}, {"temperature": torch.tensor(0.8)}]
with torch.no_grad():
    for body in requests:
        hidden = torch.randn(4, 10, 64)
        token = head(hidden, float(body["temperature"]))
        if htcore is not None:
            htcore.mark_step()
print(token.squeeze(-1).tolist())
