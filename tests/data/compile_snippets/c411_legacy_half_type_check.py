"""Legacy language-model head that upcasts half-precision activations before its LayerNorm.

The code dates from before `dtype` comparisons were common and tests the tensor's legacy type
string, `x.type()`, against the half-precision names to decide whether to run the norm in
float32. The model is compiled and run in float32 for evaluation.
"""
import torch
import torch.nn as nn

torch.manual_seed(0)
HALF_TYPES = ("torch.HalfTensor", "torch.cuda.HalfTensor")


class SafeLayerNorm(nn.LayerNorm):
    def forward(self, x):
        if x.type() in HALF_TYPES:
            return super().forward(x.float()).half()
        return super().forward(x)


class LMHead(nn.Module):
    def __init__(self, dim=32, vocab=200):
        super().__init__()
        self.dense = nn.Linear(dim, dim)
        self.norm = SafeLayerNorm(dim)
        self.decoder = nn.Linear(dim, vocab)

    def forward(self, hidden):
        return self.decoder(self.norm(torch.tanh(self.dense(hidden))))


head = LMHead().eval()
compiled = torch.compile(head)
with torch.no_grad():
    for step in range(4):
        logits = compiled(torch.randn(2, 10, 32))
print(logits.argmax(-1).shape)
