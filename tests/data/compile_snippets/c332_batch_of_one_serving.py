"""An online intent classifier behind a request queue: each call takes whatever requests
are waiting, so the compiled model sees batches of 8, 5, then single requests and other
sizes as traffic changes during the day."""
import torch
import torch.nn as nn

torch.manual_seed(0)


class IntentModel(nn.Module):
    def __init__(self, vocab=200, dim=32, n_intents=6):
        super().__init__()
        self.embed = nn.EmbeddingBag(vocab, dim, mode="mean")
        self.mlp = nn.Sequential(nn.Linear(dim, 64), nn.ReLU(), nn.Linear(64, n_intents))

    def forward(self, ids):
        return self.mlp(self.embed(ids)).softmax(-1)


def drain(queue_sizes):
    for n in queue_sizes:
        yield torch.randint(0, 200, (n, 12))


model = torch.compile(IntentModel().eval())
with torch.no_grad():
    for ids in drain([8, 5, 1, 3, 1, 7, 6]):
        probs = model(ids)
print(probs.shape)
