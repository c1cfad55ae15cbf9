"""`openxla` sentence-embedding service: a small Transformer encoder over padded token batches,
mean-pooled over the real tokens only; the compiled `embed` wraps the hidden states and the
padding mask in a `torch.masked.MaskedTensor` (`masked_tensor(states, mask)`), sums it over the
sequence and divides by the token counts before normalizing."""
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.masked import masked_tensor

try:
    import torch_xla.core.xla_model as xm
    BACKEND, device = "openxla", xm.xla_device()
except ImportError:  # CPU run without PyTorch/XLA
    xm, BACKEND, device = None, "eager", torch.device("cpu")

torch.manual_seed(0)
VOCAB, DIM, PAD = 1000, 64, 0
embedding = nn.Embedding(VOCAB, DIM, padding_idx=PAD).to(device)
layer = nn.TransformerEncoderLayer(DIM, nhead=4, dim_feedforward=128, batch_first=True)
encoder = nn.TransformerEncoder(layer, num_layers=2).to(device).eval()


def embed(input_ids):
    keep = input_ids != PAD
    states = encoder(embedding(input_ids), src_key_padding_mask=~keep)
    pooled = masked_tensor(states, keep.unsqueeze(-1).expand_as(states)).sum(dim=1).get_data()
    pooled = pooled / keep.sum(dim=1, keepdim=True)
    return F.normalize(pooled, dim=-1)


serve = torch.compile(embed, backend=BACKEND)
with torch.no_grad():
    for request in range(3):
        ids = torch.randint(1, VOCAB, (4, 24))
        ids[:, 18 - 4 * request:] = PAD
        vectors = serve(ids.to(device))
        if xm is not None:
            xm.mark_step()
print((vectors @ vectors.T).diagonal().tolist())
