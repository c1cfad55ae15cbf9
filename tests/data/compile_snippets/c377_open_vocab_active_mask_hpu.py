"""Open-set intent classifier on Gaudi that keeps the number of known intents on the device.

Like a classifier with spare output rows: new intent names are registered in a Python dict outside
the model, and the count of registered intents is copied into a buffer. `forward` masks the spare
rows with a comparison against that buffer, so the logits keep their full width.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

try:
    import habana_frameworks.torch.core as htcore  # Gaudi software stack: registers "hpu_backend"
except ImportError:  # CPU-only machine: same code, no step markers
    htcore = None

torch.manual_seed(0)
MAX_INTENTS = 32


class MaskedIntentClassifier(nn.Module):
    def __init__(self, vocab_size=500, dim=32):
        super().__init__()
        self.embed = nn.EmbeddingBag(vocab_size, dim, mode="mean")
        self.proj = nn.Linear(dim, dim)
        self.out = nn.Linear(dim, MAX_INTENTS)
        self.register_buffer("num_active", torch.zeros((), dtype=torch.long))
        self.register_buffer("rows", torch.arange(MAX_INTENTS))

    def forward(self, token_ids):
        h = torch.tanh(self.proj(self.embed(token_ids)))
        logits = self.out(h)
        return logits.masked_fill(self.rows >= self.num_active, float("-inf"))


intents = {}
model = MaskedIntentClassifier()
compiled = torch.compile(model, backend="hpu_backend" if htcore else "eager")
opt = torch.optim.AdamW(model.parameters(), lr=1e-3)

names = ["greet", "bye", "weather", "alarm", "music", "timer", "news", "joke",
         "recipe", "traffic", "lights", "volume", "reminder", "call", "sport", "stock"]
for step in range(8):
    batch_names = names[2 * step: 2 * step + 2] + names[: 2 * step][-6:]
    labels = torch.tensor([intents.setdefault(n, len(intents)) for n in batch_names])
    model.num_active.fill_(len(intents))
    tokens = torch.randint(0, 500, (len(batch_names), 12))
    loss = F.cross_entropy(compiled(tokens), labels)
    loss.backward()
    opt.step()
    opt.zero_grad()
    if htcore:
        htcore.mark_step()
print(len(intents), round(loss.item(), 3))
