"""Decoder-only language model whose forward builds its causal mask and position ids under
`with torch.device(tokens.device):`, the default-device context manager that gpt-fast- and
torchtune-style code uses so the new tensors land on the input's device without passing
`device=` to each factory; the model is compiled for the training loop."""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class TinyDecoder(nn.Module):
    def __init__(self, vocab=64, dim=32, heads=4, max_len=32):
        super().__init__()
        self.heads = heads
        self.tok = nn.Embedding(vocab, dim)
        self.pos = nn.Embedding(max_len, dim)
        self.qkv = nn.Linear(dim, 3 * dim)
        self.proj = nn.Linear(dim, dim)
        self.lm_head = nn.Linear(dim, vocab)

    def forward(self, tokens):
        b, t = tokens.shape
        with torch.device(tokens.device):
            positions = torch.arange(t)
            causal = torch.ones(t, t, dtype=torch.bool).tril()
        x = self.tok(tokens) + self.pos(positions)
        q, k, v = self.qkv(x).view(b, t, 3, self.heads, -1).permute(2, 0, 3, 1, 4)
        attn = F.scaled_dot_product_attention(q, k, v, attn_mask=causal)
        x = x + self.proj(attn.transpose(1, 2).reshape(b, t, -1))
        return self.lm_head(x)


model = TinyDecoder()
compiled = torch.compile(model)
opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
for _ in range(3):
    tokens = torch.randint(0, 64, (4, 17))
    logits = compiled(tokens[:, :-1])
    loss = F.cross_entropy(logits.reshape(-1, 64), tokens[:, 1:].reshape(-1))
    loss.backward()
    opt.step()
    opt.zero_grad()
print(loss.item())
