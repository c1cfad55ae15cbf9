"""Multi-dataset fine-tuning: batches from three corpora are interleaved, each corpus having its
own collate function; the compiled training step moves whatever the batch holds to the device
and calls the model with it."""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
device = torch.device("cpu")


class Tagger(nn.Module):
    def __init__(self, vocab=60, dim=24, tags=5):
        super().__init__()
        self.embed = nn.Embedding(vocab, dim)
        self.mixer = nn.Sequential(nn.Linear(dim, dim), nn.GELU())
        self.head = nn.Linear(dim, tags)

    def forward(self, input_ids, attention_mask, labels):
        h = self.mixer(self.embed(input_ids)) * attention_mask.unsqueeze(-1)
        loss = F.cross_entropy(self.head(h).flatten(0, 1), labels.flatten(), reduction="none")
        return (loss * attention_mask.flatten()).sum() / attention_mask.sum()


def collate_news(n=4, t=12):
    ids = torch.randint(0, 60, (n, t))
    return {"input_ids": ids, "attention_mask": torch.ones(n, t), "labels": torch.randint(0, 5, (n, t))}


def collate_social(n=4, t=12):
    labels = torch.randint(0, 5, (n, t))
    return {"labels": labels, "input_ids": torch.randint(0, 60, (n, t)), "attention_mask": torch.ones(n, t)}


def collate_legal(n=4, t=12):
    mask = torch.ones(n, t)
    return {"attention_mask": mask, "labels": torch.randint(0, 5, (n, t)), "input_ids": torch.randint(0, 60, (n, t))}


model = Tagger().to(device)
opt = torch.optim.AdamW(model.parameters(), lr=1e-3)


@torch.compile
def train_step(batch):
    batch = {k: v.to(device, non_blocking=True) for k, v in batch.items()}
    return model(**batch)


collates = [collate_news, collate_social, collate_legal]
for step in range(9):
    loss = train_step(collates[step % 3]())
    loss.backward()
    opt.step()
    opt.zero_grad()
print(loss.detach())
