"""Padding-free sentence encoder for a retrieval index: each batch packs the sentences' tokens
end to end (no padding) with a tensor of sentence lengths, and the compiled encoder mean-pools the
token states per sentence with `torch.segment_reduce(states, "mean", lengths=lengths)` before
projecting and normalizing; batches hold different numbers of sentences and tokens."""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
VOCAB, DIM = 2000, 64


class PackedEncoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(VOCAB, DIM)
        self.mix = nn.Sequential(nn.Linear(DIM, 128), nn.GELU(), nn.Linear(128, DIM))
        self.proj = nn.Linear(DIM, DIM)

    def forward(self, token_ids, lengths):
        states = self.embed(token_ids)
        states = states + self.mix(states)
        pooled = torch.segment_reduce(states, "mean", lengths=lengths)
        return F.normalize(self.proj(pooled), dim=-1)


encoder = torch.compile(PackedEncoder().eval())
index = []
with torch.no_grad():
    for sentence_lengths in ([7, 12, 5], [9, 4, 11, 6], [3, 15], [8, 8, 2, 10, 5]):
        lengths = torch.tensor(sentence_lengths)
        token_ids = torch.randint(0, VOCAB, (int(sum(sentence_lengths)),))
        index.append(encoder(token_ids, lengths))
print(torch.cat(index).shape)
