"""Gaudi (`hpu_backend`) character language model trained with truncated backpropagation through
time: the corpus is cut into chunks of 16 steps and the hidden state is carried from one chunk to
the next; the compiled `forward` cuts the history of the carried state with
`hidden = hidden.detach()` before unrolling its recurrent cell over the chunk."""
import torch
import torch.nn as nn
import torch.nn.functional as F

try:
    import habana_frameworks.torch.core as htcore
    BACKEND = "hpu_backend"
except ImportError:  # CPU run without the Gaudi software stack
    htcore, BACKEND = None, "eager"

torch.manual_seed(0)
VOCAB, HIDDEN, BPTT = 64, 128, 16


class CharRNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(VOCAB, HIDDEN)
        self.cell = nn.GRUCell(HIDDEN, HIDDEN)
        self.head = nn.Linear(HIDDEN, VOCAB)

    def forward(self, chunk, hidden):
        hidden = hidden.detach()
        logits = []
        for t in range(chunk.shape[1]):
            hidden = self.cell(self.embed(chunk[:, t]), hidden)
            logits.append(self.head(hidden))
        return torch.stack(logits, dim=1), hidden


model = CharRNN()
compiled = torch.compile(model, backend=BACKEND)
opt = torch.optim.Adam(model.parameters(), lr=3e-3)
stream = torch.randint(0, VOCAB, (8, 5 * BPTT + 1))
hidden = torch.zeros(8, HIDDEN)
for start in range(0, 5 * BPTT, BPTT):
    inputs, targets = stream[:, start:start + BPTT], stream[:, start + 1:start + BPTT + 1]
    logits, hidden = compiled(inputs, hidden)
    loss = F.cross_entropy(logits.reshape(-1, VOCAB), targets.reshape(-1))
    loss.backward()
    opt.step()
    opt.zero_grad()
    if htcore is not None:
        htcore.mark_step()
print(f"loss {loss.item():.4f}")
