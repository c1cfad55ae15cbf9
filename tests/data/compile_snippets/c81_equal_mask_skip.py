import torch
import torch.nn as nn

torch.manual_seed(0)


class MaskedPool(nn.Module):
    def __init__(self, dim=16):
        super().__init__()
        self.proj = nn.Linear(dim, dim)

    def forward(self, x, attention_mask):
        h = self.proj(x)
        if torch.equal(attention_mask, torch.ones_like(attention_mask)):
            return h.mean(dim=1)
        m = attention_mask.unsqueeze(-1).to(h.dtype)
        return (h * m).sum(1) / m.sum(1).clamp(min=1)


pool = torch.compile(MaskedPool())
with torch.no_grad():
    for i in range(4):
        mask = torch.ones(2, 10, dtype=torch.long)
        if i % 2:
            mask[:, 7:] = 0
        print(pool(torch.randn(2, 10, 16), mask).shape)
