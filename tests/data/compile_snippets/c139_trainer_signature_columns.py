"""Trainer-style training step: the collator yields more columns than the model takes, so the
step keeps only the keys named in the model's forward signature before calling it. The whole
step is compiled."""
import inspect

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class Classifier(nn.Module):
    def __init__(self, vocab=50, dim=32, num_labels=3):
        super().__init__()
        self.embed = nn.EmbeddingBag(vocab, dim, mode="mean")
        self.head = nn.Linear(dim, num_labels)

    def forward(self, input_ids, labels=None):
        logits = self.head(self.embed(input_ids))
        return F.cross_entropy(logits, labels) if labels is not None else logits


class Trainer:
    def __init__(self, model):
        self.model = model
        self.opt = torch.optim.SGD(model.parameters(), lr=0.1)
        self.step_fn = torch.compile(self.compute_loss)

    def _signature_columns(self):
        return set(inspect.signature(self.model.forward).parameters)

    def compute_loss(self, batch):
        keep = self._signature_columns()
        inputs = {k: v for k, v in batch.items() if k in keep}
        return self.model(**inputs)

    def train(self, batches):
        for batch in batches:
            loss = self.step_fn(batch)
            loss.backward()
            self.opt.step()
            self.opt.zero_grad()
        return loss.detach()


def collate(n=8):
    return {"input_ids": torch.randint(0, 50, (n, 10)), "labels": torch.randint(0, 3, (n,)),
            "idx": torch.arange(n), "length": torch.full((n,), 10)}


print(Trainer(Classifier()).train([collate() for _ in range(5)]))
