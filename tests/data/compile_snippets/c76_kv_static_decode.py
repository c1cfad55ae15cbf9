import torch
import torch.nn as nn

torch.manual_seed(0)


class TinyDecoder(nn.Module):
    def __init__(self, vocab=50, dim=32):
        super().__init__()
        self.embed = nn.Embedding(vocab, dim)
        self.qkv = nn.Linear(dim, 3 * dim)
        self.lm_head = nn.Linear(dim, vocab)

    def forward(self, input_ids, past_k, past_v):
        h = self.embed(input_ids)
        q, k, v = self.qkv(h).chunk(3, dim=-1)
        k = torch.cat([past_k, k], dim=1)
        v = torch.cat([past_v, v], dim=1)
        att = torch.softmax(q @ k.transpose(1, 2) / 32 ** 0.5, dim=-1)
        return self.lm_head(att @ v), k, v


model = TinyDecoder().eval()
model = torch.compile(model, dynamic=False)

ids = torch.tensor([[1, 2, 3]])
past_k = torch.zeros(1, 0, 32)
past_v = torch.zeros(1, 0, 32)
with torch.no_grad():
    logits, past_k, past_v = model(ids, past_k, past_v)
    generated = [ids]
    for _ in range(12):
        next_id = logits[:, -1:].argmax(-1)
        generated.append(next_id)
        logits, past_k, past_v = model(next_id, past_k, past_v)
print(torch.cat(generated, dim=1))
