"""Embedding a document corpus for retrieval: documents are sorted by length, batched, padded to
the model's maximum length, and encoded by a compiled function built with static shapes."""
import functools

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
compile_static = functools.partial(torch.compile, dynamic=False)
MAX_LEN = 48


class Encoder(nn.Module):
    def __init__(self, vocab=100, dim=32):
        super().__init__()
        self.embed = nn.Embedding(vocab, dim, padding_idx=0)
        self.layer = nn.TransformerEncoderLayer(dim, 4, 64, batch_first=True)

    def forward(self, tokens):
        return self.layer(self.embed(tokens), src_key_padding_mask=tokens == 0)


encoder = Encoder().eval()


@compile_static
def encode(tokens):
    mask = (tokens != 0).unsqueeze(-1).float()
    pooled = (encoder(tokens) * mask).sum(1) / mask.sum(1)
    return F.normalize(pooled, dim=-1)


def collate(docs):
    return torch.stack([F.pad(d[:MAX_LEN], (0, MAX_LEN - len(d[:MAX_LEN]))) for d in docs])


corpus = sorted((torch.randint(1, 100, (n,)) for n in torch.randint(4, 40, (40,)).tolist()), key=len)
embeddings = []
with torch.no_grad():
    for i in range(0, len(corpus), 4):
        embeddings.append(encode(collate(corpus[i:i + 4])))
print("index", torch.cat(embeddings).shape)
