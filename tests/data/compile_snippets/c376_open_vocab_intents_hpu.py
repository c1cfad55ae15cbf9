"""Open-set intent classifier on Gaudi that learns new intent labels as they show up.

The model keeps a label vocabulary (a dict from intent name to row) and a fixed-size output layer
with spare rows; `forward` returns the logits of the labels registered so far. The stream of
labelled utterances brings two new intents per batch, so the dict grows between calls of the
compiled model.
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


class OpenIntentClassifier(nn.Module):
    def __init__(self, vocab_size=500, dim=32):
        super().__init__()
        self.intents = {}
        self.embed = nn.EmbeddingBag(vocab_size, dim, mode="mean")
        self.proj = nn.Linear(dim, dim)
        self.out = nn.Linear(dim, MAX_INTENTS)

    def register(self, name):
        return self.intents.setdefault(name, len(self.intents))

    def forward(self, token_ids):
        h = torch.tanh(self.proj(self.embed(token_ids)))
        logits = self.out(h)
        return logits[:, : len(self.intents)]


model = OpenIntentClassifier()
compiled = torch.compile(model, backend="hpu_backend" if htcore else "eager")
opt = torch.optim.AdamW(model.parameters(), lr=1e-3)

names = ["greet", "bye", "weather", "alarm", "music", "timer", "news", "joke",
         "recipe", "traffic", "lights", "volume", "reminder", "call", "sport", "stock"]
for step in range(8):
    batch_names = names[2 * step: 2 * step + 2] + names[: 2 * step][-6:]
    labels = torch.tensor([model.register(n) for n in batch_names])
    tokens = torch.randint(0, 500, (len(batch_names), 12))
    loss = F.cross_entropy(compiled(tokens), labels)
    loss.backward()
    opt.step()
    opt.zero_grad()
    if htcore:
        htcore.mark_step()
print(len(model.intents), round(loss.item(), 3))
