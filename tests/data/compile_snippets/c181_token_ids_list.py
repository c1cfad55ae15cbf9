"""Sentence-embedding service: a whitespace tokenizer maps each incoming sentence to a list of
vocabulary ids and a compiled encoder mean-pools the token embeddings into one vector per
sentence."""
import torch
import torch.nn as nn

torch.manual_seed(0)

VOCAB = {w: i for i, w in enumerate("<unk> the a cat dog sat on mat ran fast slow big small".split())}


def tokenize(text):
    return [VOCAB.get(word, 0) for word in text.lower().split()]


class Encoder(nn.Module):
    def __init__(self, vocab=len(VOCAB), dim=32):
        super().__init__()
        self.embed = nn.Embedding(vocab, dim)
        self.proj = nn.Linear(dim, dim)

    def forward(self, token_ids):
        ids = torch.tensor(token_ids, dtype=torch.long)
        return nn.functional.normalize(self.proj(self.embed(ids).mean(dim=0)), dim=-1)


encoder = torch.compile(Encoder().eval())
sentences = ["The cat sat", "A big dog ran fast", "the mat", "The small cat sat on the mat",
             "Dog ran", "A slow big dog sat on a mat"]
with torch.no_grad():
    vectors = torch.stack([encoder(tokenize(s)) for s in sentences])
print(vectors @ vectors.t())
