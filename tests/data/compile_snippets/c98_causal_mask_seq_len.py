import torch
import torch.nn.functional as F

torch.manual_seed(0)


@torch.compile
def causal_attention(q, k, v, seq_len: int):
    scores = q @ k.transpose(-2, -1) / q.shape[-1] ** 0.5
    mask = torch.ones(seq_len, seq_len, dtype=torch.bool).triu(1)
    scores = scores.masked_fill(mask, float("-inf"))
    return F.softmax(scores, dim=-1) @ v


for seq_len in (16, 24, 32, 40, 48):
    q, k, v = (torch.randn(2, 4, seq_len, 8) for _ in range(3))
    out = causal_attention(q, k, v, seq_len)
print(out.shape)
