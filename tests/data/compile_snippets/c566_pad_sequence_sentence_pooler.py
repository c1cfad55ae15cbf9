"""Gaudi (`hpu_backend`) sentence-embedding service: each request carries a few tokenized sentences
as 1-D tensors of token ids of their own lengths, and the compiled `embed` pads them itself with
`torch.nn.utils.rnn.pad_sequence(..., batch_first=True, padding_value=PAD)`, encodes them and
mean-pools the states over the real tokens."""
import torch
import torch.nn as nn
from torch.nn.utils.rnn import pad_sequence

try:
    import habana_frameworks.torch.core as htcore
    BACKEND = "hpu_backend"
except ImportError:  # CPU run without the Gaudi software stack
    htcore, BACKEND = None, "eager"

torch.manual_seed(0)
VOCAB, DIM, PAD = 1000, 64, 0


class SentenceEncoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(VOCAB, DIM, padding_idx=PAD)
        self.layer = nn.TransformerEncoderLayer(DIM, nhead=4, dim_feedforward=128, batch_first=True)

    def forward(self, input_ids, mask):
        return self.layer(self.embed(input_ids), src_key_padding_mask=~mask)


encoder = SentenceEncoder().eval()


@torch.compile(backend=BACKEND)
def embed(sentences):
    input_ids = pad_sequence(sentences, batch_first=True, padding_value=PAD)
    mask = input_ids != PAD
    states = encoder(input_ids, mask)
    pooled = (states * mask.unsqueeze(-1)).sum(1) / mask.sum(1, keepdim=True)
    return nn.functional.normalize(pooled, dim=-1)


with torch.no_grad():
    for request in range(6):
        lengths = torch.randint(4, 24, (3,)).tolist()
        sentences = [torch.randint(1, VOCAB, (n,)) for n in lengths]
        vectors = embed(sentences)
        if htcore is not None:
            htcore.mark_step()
print(tuple(vectors.shape), f"{(vectors[0] @ vectors[1]).item():.3f}")
