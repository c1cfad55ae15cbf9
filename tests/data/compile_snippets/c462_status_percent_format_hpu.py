"""Gaudi (`hpu_backend`) text-classifier fine-tuning with a one-line terminal status: the compiled
training loss writes `"loss %.4f | acc %.3f" % (loss, acc)` into the status object while it
computes the batch's loss and accuracy, and the loop redraws the status after every step."""
import torch
import torch.nn as nn
import torch.nn.functional as F

try:
    import habana_frameworks.torch.core as htcore
    BACKEND = "hpu_backend"
except ImportError:  # CPU run without the Gaudi stack
    htcore = None
    BACKEND = "eager"

torch.manual_seed(0)


class Status:
    def __init__(self):
        self.line = ""

    def draw(self, step):
        print(f"\rstep {step:3d} {self.line}", end="")


class BagOfWords(nn.Module):
    def __init__(self, vocab=500, dim=32, classes=3):
        super().__init__()
        self.embed = nn.EmbeddingBag(vocab, dim)
        self.head = nn.Linear(dim, classes)

    def forward(self, ids):
        return self.head(self.embed(ids))


model = BagOfWords()
status = Status()


@torch.compile(backend=BACKEND)
def train_loss(ids, labels):
    logits = model(ids)
    loss = F.cross_entropy(logits, labels)
    acc = (logits.argmax(-1) == labels).float().mean()
    status.line = "loss %.4f | acc %.3f" % (loss, acc)
    return loss


opt = torch.optim.Adam(model.parameters(), lr=1e-2)
for step in range(5):
    ids = torch.randint(0, 500, (16, 24))
    labels = torch.randint(0, 3, (16,))
    loss = train_loss(ids, labels)
    loss.backward()
    opt.step()
    opt.zero_grad()
    if htcore is not None:
        htcore.mark_step()
    status.draw(step)
print()
