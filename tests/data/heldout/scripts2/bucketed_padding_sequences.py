# Variable-length sequences padded up to one of three bucket lengths so that only three shapes
# reach the device; a mean-pooled embedding classifier.
import random

import torch
import torch_xla
import torch_xla.core.xla_model as xm

device = torch_xla.device()
random.seed(19)
torch.manual_seed(19)
buckets = [8, 16, 24]
vocab = 50


class Pooled(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = torch.nn.Embedding(vocab, 16, padding_idx=0)
        self.out = torch.nn.Linear(16, 2)

    def forward(self, tokens, mask):
        h = self.emb(tokens) * mask.unsqueeze(-1)
        return self.out(h.sum(1) / mask.sum(1, keepdim=True))


def make_batch(n=4):
    lengths = [random.randint(3, 24) for _ in range(n)]
    width = next(b for b in buckets if b >= max(lengths))
    tokens = torch.zeros(n, width, dtype=torch.long)
    mask = torch.zeros(n, width)
    for i, length in enumerate(lengths):
        tokens[i, :length] = torch.randint(1, vocab, (length,))
        mask[i, :length] = 1.0
    return tokens, mask, torch.randint(0, 2, (n,))


model = Pooled().to(device)
opt = torch.optim.Adam(model.parameters(), lr=1e-2)
for step in range(12):
    tokens, mask, labels = make_batch()
    logits = model(tokens.to(device), mask.to(device))
    loss = torch.nn.functional.cross_entropy(logits, labels.to(device))
    opt.zero_grad()
    loss.backward()
    opt.step()
    xm.mark_step()
    if step % 4 == 3:
        print(step, tokens.shape[1], loss.item())
