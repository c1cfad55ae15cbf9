"""Token-classification evaluation: the compiled model returns the tag logits and the metric
object, in eager code after the call, keeps the labelled tokens and counts the correct ones."""
import torch
import torch.nn as nn

torch.manual_seed(0)
VOCAB, TAGS, IGNORE = 500, 9, -100


class ConvTagger(nn.Module):
    def __init__(self, dim=64):
        super().__init__()
        self.embed = nn.Embedding(VOCAB, dim, padding_idx=0)
        self.conv = nn.Conv1d(dim, dim, 5, padding=2)
        self.out = nn.Linear(dim, TAGS)

    def forward(self, ids):
        h = self.embed(ids)
        h = h + self.conv(h.transpose(1, 2)).relu().transpose(1, 2)
        return self.out(h)


class TokenAccuracy:
    def __init__(self):
        self.correct = 0
        self.total = 0

    def update(self, logits, tags, attention_mask):
        keep = attention_mask.bool() & (tags != IGNORE)
        pred = logits.argmax(-1).masked_select(keep)
        gold = tags.masked_select(keep)
        self.correct += int((pred == gold).sum())
        self.total += gold.numel()

    def compute(self):
        return self.correct / max(self.total, 1)


def make_batch(batch=8, seq=32):
    lengths = torch.randint(8, seq + 1, (batch,))
    mask = (torch.arange(seq) < lengths[:, None]).long()
    ids = torch.randint(1, VOCAB, (batch, seq)) * mask
    tags = torch.randint(0, TAGS, (batch, seq)).masked_fill(mask == 0, IGNORE)
    tags[:, 0] = IGNORE  # the [CLS] position carries no tag
    return ids, tags, mask


model = ConvTagger().eval()
compiled = torch.compile(model)
metric = TokenAccuracy()
with torch.no_grad():
    for _ in range(4):
        ids, tags, mask = make_batch()
        metric.update(compiled(ids), tags, mask)
print("token accuracy", metric.compute())
