# A small encoder-decoder captioner. One compiled attention helper serves both the decoder's
# self-attention, where queries and keys come from the same hidden states, and its
# cross-attention over the image encoder's features.
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


@torch.compile
def attend(q_proj, kv_proj, queries, memory, heads):
    b, t, d = queries.shape
    q = q_proj(queries).view(b, t, heads, d // heads).transpose(1, 2)
    k, v = kv_proj(memory).chunk(2, dim=-1)
    k = k.view(b, -1, heads, d // heads).transpose(1, 2)
    v = v.view(b, -1, heads, d // heads).transpose(1, 2)
    out = F.scaled_dot_product_attention(q, k, v)
    return out.transpose(1, 2).reshape(b, t, d)


class DecoderLayer(nn.Module):
    def __init__(self, dim=32, heads=4):
        super().__init__()
        self.heads = heads
        self.self_q, self.self_kv = nn.Linear(dim, dim), nn.Linear(dim, 2 * dim)
        self.cross_q, self.cross_kv = nn.Linear(dim, dim), nn.Linear(dim, 2 * dim)
        self.ffn = nn.Sequential(nn.Linear(dim, 64), nn.GELU(), nn.Linear(64, dim))

    def forward(self, x, image_features):
        x = x + attend(self.self_q, self.self_kv, x, x, self.heads)
        x = x + attend(self.cross_q, self.cross_kv, x, image_features, self.heads)
        return x + self.ffn(x)


image_encoder = nn.Linear(48, 32)
embed = nn.Embedding(100, 32)
layer = DecoderLayer()
lm_head = nn.Linear(32, 100)
params = [*image_encoder.parameters(), *embed.parameters(), *layer.parameters(), *lm_head.parameters()]
opt = torch.optim.Adam(params, lr=1e-3)
for step in range(4):
    patches = torch.randn(2, 9, 48)
    captions = torch.randint(0, 100, (2, 12))
    h = layer(embed(captions[:, :-1]), image_encoder(patches))
    loss = F.cross_entropy(lm_head(h).flatten(0, 1), captions[:, 1:].flatten())
    loss.backward()
    opt.step()
    opt.zero_grad()
print(loss.item())
