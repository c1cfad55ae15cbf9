"""Sequence classification fed by a tokenizer-style batch object: the batch is a
collections.UserDict subclass that also exposes its keys as attributes, like Hugging Face's
BatchEncoding, and the compiled model reads some fields by key and some by attribute."""
import collections

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class BatchEncoding(collections.UserDict):
    def __getattr__(self, item):
        try:
            return self.data[item]
        except KeyError:
            raise AttributeError(item)


class Classifier(nn.Module):
    def __init__(self, vocab=100, dim=32, n_cls=3):
        super().__init__()
        self.embed = nn.Embedding(vocab, dim)
        self.head = nn.Linear(dim, n_cls)

    def forward(self, batch):
        mask = batch["attention_mask"].unsqueeze(-1).float()
        h = (self.embed(batch.input_ids) * mask).sum(1) / mask.sum(1).clamp(min=1)
        return self.head(h)


def tokenize(n):
    ids = torch.randint(1, 100, (4, 16))
    mask = torch.ones(4, 16, dtype=torch.long)
    mask[:, n:] = 0
    return BatchEncoding(input_ids=ids, attention_mask=mask)


model = Classifier()
compiled = torch.compile(model)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for n in (10, 12, 16, 9):
    batch = tokenize(n)
    loss = F.cross_entropy(compiled(batch), torch.randint(0, 3, (4,)))
    loss.backward()
    opt.step()
    opt.zero_grad()
print(loss)
