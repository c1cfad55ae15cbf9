"""Sentence embeddings for retrieval: a compiled pooling head receives the token states of a
batch of sentences of different lengths as a list, packs them into a nested tensor and pads
it to mean-pool each sentence."""
import torch
import torch.nn as nn

torch.manual_seed(0)


class MeanPoolHead(nn.Module):
    def __init__(self, dim=32, out=16):
        super().__init__()
        self.proj = nn.Linear(dim, out)

    def pool(self, states):
        packed = torch.nested.nested_tensor(states)
        padded = packed.to_padded_tensor(0.0)
        lengths = torch.tensor([s.shape[0] for s in states], dtype=padded.dtype)
        return padded.sum(1) / lengths[:, None]

    def forward(self, states):
        return nn.functional.normalize(self.proj(self.pool(states)), dim=-1)


head = torch.compile(MeanPoolHead().eval())
with torch.no_grad():
    for _ in range(3):
        states = [torch.randn(n, 32) for n in (5, 9, 7, 3)]
        emb = head(states)
print(emb.shape)
