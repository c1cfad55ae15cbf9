import torch
import torch.nn as nn

torch.manual_seed(0)


class TinyDecoder(nn.Module):
    def __init__(self, vocab=50, dim=32, layers=2):
        super().__init__()
        self.embed = nn.Embedding(vocab, dim)
        self.qkv = nn.ModuleList(nn.Linear(dim, 3 * dim) for _ in range(layers))
        self.head = nn.Linear(dim, vocab)

    def forward(self, input_ids, past_key_values=None):
        h = self.embed(input_ids)
        new_past = []
        for i, proj in enumerate(self.qkv):
            q, k, v = proj(h).chunk(3, dim=-1)
            if past_key_values is not None:
                k = torch.cat([past_key_values[i][0], k], dim=1)
                v = torch.cat([past_key_values[i][1], v], dim=1)
            new_past.append((k, v))
            h = h + torch.softmax(q @ k.transpose(1, 2), dim=-1) @ v
        return self.head(h), new_past


model = TinyDecoder().eval()
forward = torch.compile(model)


@torch.no_grad()
def generate(input_ids, max_new_tokens=6):
    past = None
    for _ in range(max_new_tokens):
        logits, past = forward(input_ids if past is None else input_ids[:, -1:], past_key_values=past)
        next_id = logits[:, -1].argmax(-1, keepdim=True)
        input_ids = torch.cat([input_ids, next_id], dim=1)
    return input_ids


print(generate(torch.randint(0, 50, (1, 5))))
