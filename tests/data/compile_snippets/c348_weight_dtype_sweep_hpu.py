"""Inference precision benchmark on Gaudi: a text classifier is compiled once with the
hpu_backend, and the benchmark converts the model's weights in place with `model.to(dtype)` to
fp32, bf16 and fp16 in turn, scoring the same batches at each precision; the forward casts its
input embeddings to the parameters' dtype and returns fp32 logits."""
import torch
import torch.nn as nn
import habana_frameworks.torch.core as htcore

torch.manual_seed(0)


class TextClassifier(nn.Module):
    def __init__(self, vocab=100, dim=16, classes=3):
        super().__init__()
        self.embed = nn.EmbeddingBag(vocab, dim, mode="mean")
        self.mlp = nn.Sequential(nn.Linear(dim, 32), nn.GELU(), nn.Linear(32, classes))

    def forward(self, token_ids):
        pooled = self.embed(token_ids)
        dtype = self.mlp[0].weight.dtype
        return self.mlp(pooled.to(dtype)).float()


model = TextClassifier().eval()
compiled = torch.compile(model, backend="hpu_backend")
batches = [torch.randint(0, 100, (8, 12)) for _ in range(2)]
agreement = {}
with torch.no_grad():
    reference = [model(b).argmax(-1) for b in batches]
    for dtype in (torch.float32, torch.bfloat16, torch.float16):
        model.to(dtype)
        preds = []
        for b in batches:
            preds.append(compiled(b).argmax(-1))
            htcore.mark_step()
        agreement[str(dtype)] = float(torch.cat(preds).eq(torch.cat(reference)).float().mean())
print(agreement)
