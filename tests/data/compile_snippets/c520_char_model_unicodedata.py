"""`openxla` character-level intent classifier served from raw text: the compiled `encode(text)`
normalizes the request string with `unicodedata.normalize("NFKC", ...)`, lower-cases it, maps
each character to a byte-sized id and pads to a fixed width before the embedding and the head."""
import unicodedata

import torch
import torch.nn as nn

try:
    import torch_xla.core.xla_model as xm
    BACKEND, device = "openxla", xm.xla_device()
except ImportError:  # CPU run without torch_xla
    xm, BACKEND, device = None, "eager", torch.device("cpu")

torch.manual_seed(0)
WIDTH = 32


class CharIntent(nn.Module):
    def __init__(self, dim=48, intents=6):
        super().__init__()
        self.emb = nn.Embedding(256, dim)
        self.conv = nn.Conv1d(dim, dim, 3, padding=1)
        self.head = nn.Linear(dim, intents)

    def forward(self, ids):
        h = self.conv(self.emb(ids).transpose(1, 2)).relu()
        return self.head(h.amax(dim=-1))


model = CharIntent().to(device).eval()


def encode(text):
    text = unicodedata.normalize("NFKC", text).lower()
    ids = [min(ord(ch), 255) for ch in text[:WIDTH]]
    ids += [0] * (WIDTH - len(ids))
    return model(torch.tensor([ids], device=device)).softmax(-1)


serve = torch.compile(encode, backend=BACKEND)
requests = ["Book a table for two", "ＷＨＡＴ is the weather", "play some jazz",
            "set an alarm at 7", "Café hours today?"]
with torch.no_grad():
    for text in requests:
        probs = serve(text)
        if xm is not None:
            xm.mark_step()
print(probs.argmax(-1).tolist())
