# Greedy decoding on Gaudi in chunks: a compiled function runs up to CHUNK recurrent decode
# steps and stops early once the end-of-sequence id shows up among the new tokens, so that the
# server can stream each chunk back.
import habana_frameworks.torch.core as htcore
import torch
import torch.nn as nn

torch.manual_seed(0)

VOCAB, EOS, CHUNK = 40, 2, 6
device = torch.device("cpu")  # "hpu" on Gaudi


class RecurrentLM(nn.Module):
    def __init__(self, dim=32):
        super().__init__()
        self.embed = nn.Embedding(VOCAB, dim)
        self.cell = nn.LSTMCell(dim, dim)
        self.head = nn.Linear(dim, VOCAB)

    def forward(self, tokens, state):
        h, c = self.cell(self.embed(tokens), state)
        return self.head(h), (h, c)


model = RecurrentLM().to(device).eval()


def decode_chunk(tokens, state):
    new_tokens = []
    for _ in range(CHUNK):
        logits, state = model(tokens, state)
        tokens = logits.argmax(-1)
        new_tokens.append(tokens)
        if EOS in tokens:
            break
    return torch.stack(new_tokens, dim=1), tokens, state


decode_fn = torch.compile(decode_chunk, backend="hpu_backend")
with torch.no_grad():
    tokens = torch.tensor([5, 7], device=device)
    state = (torch.zeros(2, 32, device=device), torch.zeros(2, 32, device=device))
    chunks = []
    for _ in range(3):
        chunk, tokens, state = decode_fn(tokens, state)
        htcore.mark_step()
        chunks.append(chunk)
print(torch.cat(chunks, dim=1).tolist())
