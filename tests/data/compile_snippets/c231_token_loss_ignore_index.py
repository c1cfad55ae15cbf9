"""Multi-task fine-tuning of a tagger: the loss is picked by the task's name from a table, and
the token-level loss leaves out the padding tokens through the ignored label."""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)

LOSSES = {
    "sequence": lambda logits, labels, mask: F.cross_entropy(logits[:, 0], labels[:, 0]),
    "token": lambda logits, labels, mask: F.cross_entropy(
        logits.flatten(0, 1), labels.masked_fill(~mask, -100).flatten(), ignore_index=-100),
}


class Tagger(nn.Module):
    def __init__(self, vocab=100, dim=32, n_tags=9):
        super().__init__()
        self.embed = nn.Embedding(vocab, dim, padding_idx=0)
        self.encoder = nn.TransformerEncoderLayer(dim, 4, 64, batch_first=True)
        self.classifier = nn.Linear(dim, n_tags)

    def forward(self, ids):
        return self.classifier(self.encoder(self.embed(ids)))


def training_step(model, batch, task="token", **loss_kwargs):
    logits = model(batch["ids"])
    return LOSSES[task](logits, batch["labels"], batch["ids"] != 0, **loss_kwargs)


model = Tagger()
step_fn = torch.compile(training_step)
opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
for step in range(5):
    ids = torch.randint(1, 100, (8, 20))
    ids[:, torch.randint(10, 20, ()).item():] = 0
    loss = step_fn(model, {"ids": ids, "labels": torch.randint(0, 9, (8, 20))})
    loss.backward()
    opt.step()
    opt.zero_grad()
print(f"loss {loss.item():.4f}")
