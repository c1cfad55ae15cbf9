"""Character-level language model whose attention reads its causal mask through a `causal_mask`
property: the property builds the mask for the model's context length on first use and keeps it
in `self._mask`, later reads return the stored mask."""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class CausalSelfAttention(nn.Module):
    def __init__(self, dim=32, heads=4, context=16):
        super().__init__()
        self.heads, self.context = heads, context
        self.qkv = nn.Linear(dim, 3 * dim)
        self.proj = nn.Linear(dim, dim)
        self._mask = None

    @property
    def causal_mask(self):
        if self._mask is None:
            self._mask = torch.ones(self.context, self.context, dtype=torch.bool).tril()
        return self._mask

    def forward(self, x):
        b, t, d = x.shape
        q, k, v = self.qkv(x).view(b, t, 3, self.heads, d // self.heads).unbind(2)
        att = (q.transpose(1, 2) @ k.transpose(1, 2).transpose(-1, -2)) / (d // self.heads) ** 0.5
        att = att.masked_fill(~self.causal_mask[:t, :t], float("-inf")).softmax(-1)
        return self.proj((att @ v.transpose(1, 2)).transpose(1, 2).reshape(b, t, d))


class CharLM(nn.Module):
    def __init__(self, vocab=40, dim=32):
        super().__init__()
        self.embed = nn.Embedding(vocab, dim)
        self.attn = CausalSelfAttention(dim)
        self.out = nn.Linear(dim, vocab)

    def forward(self, ids):
        h = self.embed(ids)
        return self.out(h + self.attn(h))


model = CharLM()
step_model = torch.compile(model)
opt = torch.optim.Adam(model.parameters(), lr=3e-3)
for step in range(5):
    ids = torch.randint(0, 40, (8, 17))
    logits = step_model(ids[:, :-1])
    loss = F.cross_entropy(logits.reshape(-1, 40), ids[:, 1:].reshape(-1))
    loss.backward()
    opt.step()
    opt.zero_grad()
print(f"loss {loss.item():.4f}")
