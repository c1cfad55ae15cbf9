"""Gaudi (`hpu_backend`) bf16 inference of a BERT-style classifier written the Hugging Face way:
the model's `dtype` property returns `next(self.parameters()).dtype`, and
`get_extended_attention_mask` turns the padding mask into an additive bias with
`torch.finfo(self.dtype).min`, both called from `forward`."""
import torch
import torch.nn as nn

try:
    import habana_frameworks.torch.core as htcore
    BACKEND = "hpu_backend"
except ImportError:  # CPU run without the Gaudi stack
    htcore = None
    BACKEND = "eager"

torch.manual_seed(0)


class TinyBert(nn.Module):
    def __init__(self, vocab=200, dim=32, heads=4, classes=3):
        super().__init__()
        self.heads = heads
        self.embed = nn.Embedding(vocab, dim)
        self.qkv = nn.Linear(dim, 3 * dim)
        self.out = nn.Linear(dim, dim)
        self.classifier = nn.Linear(dim, classes)

    @property
    def dtype(self):
        return next(self.parameters()).dtype

    def get_extended_attention_mask(self, attention_mask):
        extended = attention_mask[:, None, None, :].to(dtype=self.dtype)
        return (1.0 - extended) * torch.finfo(self.dtype).min

    def forward(self, input_ids, attention_mask):
        b, n = input_ids.shape
        h = self.embed(input_ids)
        q, k, v = self.qkv(h).view(b, n, 3, self.heads, -1).permute(2, 0, 3, 1, 4)
        scores = q @ k.transpose(-1, -2) / q.shape[-1] ** 0.5
        scores = scores + self.get_extended_attention_mask(attention_mask)
        ctx = (scores.softmax(-1) @ v).transpose(1, 2).reshape(b, n, -1)
        return self.classifier(self.out(ctx)[:, 0])


model = TinyBert().to(torch.bfloat16).eval()
classify = torch.compile(model, backend=BACKEND)
with torch.no_grad():
    for batch in range(4):
        input_ids = torch.randint(0, 200, (4, 16))
        lengths = torch.randint(6, 17, (4,))
        attention_mask = (torch.arange(16)[None, :] < lengths[:, None]).long()
        logits = classify(input_ids, attention_mask)
        if htcore is not None:
            htcore.mark_step()
        print(logits.float().argmax(-1).tolist())
