"""A text classifier that still accepts a deprecated `head_mask` keyword from an older
API version: callers passing it get a deprecation notice and the mask is applied to the
pooled features. The evaluation script below is one of those old callers."""
import warnings

import torch
import torch.nn as nn

torch.manual_seed(0)


class Classifier(nn.Module):
    def __init__(self, vocab=100, dim=32, classes=3):
        super().__init__()
        self.emb = nn.EmbeddingBag(vocab, dim)
        self.out = nn.Linear(dim, classes)

    def forward(self, ids, head_mask=None):
        h = self.emb(ids)
        if head_mask is not None:
            warnings.warn("`head_mask` is deprecated and will be removed", FutureWarning)
            h = h * head_mask
        return self.out(h)


model = torch.compile(Classifier().eval())
mask = torch.ones(32)
with torch.no_grad():
    for _ in range(4):
        logits = model(torch.randint(0, 100, (4, 12)), head_mask=mask)
print(logits.argmax(-1))
