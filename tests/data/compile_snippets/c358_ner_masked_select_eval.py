"""Token-classification evaluation: an evaluator compiles its step method, which tags a batch
and keeps the predictions and gold tags of the real, labelled tokens for the accuracy."""
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


class TaggingEvaluator:
    def __init__(self, model):
        self.model = model
        self.step = torch.compile(self._step)

    def _step(self, ids, tags, attention_mask):
        pred = self.model(ids).argmax(-1)
        keep = attention_mask.bool() & (tags != IGNORE)
        return pred.masked_select(keep), tags.masked_select(keep)

    @torch.no_grad()
    def evaluate(self, batches):
        correct = total = 0
        for ids, tags, mask in batches:
            pred, gold = self.step(ids, tags, mask)
            correct += (pred == gold).sum()
            total += gold.numel()
        return (correct / max(total, 1)).item()


def make_batch(batch=8, seq=32):
    lengths = torch.randint(8, seq + 1, (batch,))
    mask = (torch.arange(seq) < lengths[:, None]).long()
    ids = torch.randint(1, VOCAB, (batch, seq)) * mask
    tags = torch.randint(0, TAGS, (batch, seq)).masked_fill(mask == 0, IGNORE)
    tags[:, 0] = IGNORE  # the [CLS] position carries no tag
    return ids, tags, mask


model = ConvTagger().eval()
print("token accuracy", TaggingEvaluator(model).evaluate([make_batch() for _ in range(4)]))
