"""A task-head wrapper around a text encoder, written to pass through whatever the caller gave:
its `forward` collects its own arguments with `locals()`, drops `self` and the ones left at
`None`, and calls the backbone with `**inputs`; evaluation batches come with and without
token-type ids."""
import torch
import torch.nn as nn

torch.manual_seed(0)


class Backbone(nn.Module):
    def __init__(self, vocab=300, dim=32):
        super().__init__()
        self.tok = nn.Embedding(vocab, dim)
        self.typ = nn.Embedding(2, dim)
        self.mix = nn.Linear(dim, dim)

    def forward(self, input_ids, attention_mask, token_type_ids=None):
        h = self.tok(input_ids)
        if token_type_ids is not None:
            h = h + self.typ(token_type_ids)
        h = torch.tanh(self.mix(h)) * attention_mask[..., None]
        return h.sum(1) / attention_mask.sum(1, keepdim=True)


class ClassifierWrapper(nn.Module):
    def __init__(self, classes=4):
        super().__init__()
        self.backbone = Backbone()
        self.head = nn.Linear(32, classes)

    def forward(self, input_ids, attention_mask, token_type_ids=None):
        inputs = {k: v for k, v in locals().items() if k != "self" and v is not None}
        return self.head(self.backbone(**inputs))


model = ClassifierWrapper().eval()
classify = torch.compile(model)
with torch.no_grad():
    for batch in range(4):
        ids = torch.randint(0, 300, (4, 12))
        mask = torch.ones(4, 12)
        types = torch.randint(0, 2, (4, 12))
        logits = classify(ids, mask, types)
        logits = classify(ids, attention_mask=mask)
        print(batch, logits.argmax(-1).tolist())
