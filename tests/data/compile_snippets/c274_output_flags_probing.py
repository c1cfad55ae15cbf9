"""A small encoder with Hugging Face-style output_hidden_states / output_attentions switches:
training asks for logits only, a probing pass asks for hidden states, an attention-visualisation
pass asks for attentions, and the analysis notebook asks for both, all through one compiled
model."""
import torch
import torch.nn as nn

torch.manual_seed(0)


class Layer(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.qk = nn.Linear(dim, 2 * dim)
        self.ff = nn.Linear(dim, dim)

    def forward(self, h):
        q, k = self.qk(h).chunk(2, dim=-1)
        attn = (q @ k.transpose(-1, -2) / q.shape[-1] ** 0.5).softmax(-1)
        return h + self.ff(attn @ h), attn


class Encoder(nn.Module):
    def __init__(self, vocab=100, dim=32, depth=2, classes=3):
        super().__init__()
        self.embed = nn.Embedding(vocab, dim)
        self.layers = nn.ModuleList(Layer(dim) for _ in range(depth))
        self.head = nn.Linear(dim, classes)

    def forward(self, input_ids, output_hidden_states=False, output_attentions=False):
        h = self.embed(input_ids)
        hidden, attentions = [h], []
        for layer in self.layers:
            h, attn = layer(h)
            hidden.append(h)
            attentions.append(attn)
        out = {"logits": self.head(h.mean(1))}
        if output_hidden_states:
            out["hidden_states"] = tuple(hidden)
        if output_attentions:
            out["attentions"] = tuple(attentions)
        return out


model = torch.compile(Encoder())
ids = torch.randint(0, 100, (2, 10))
loss = nn.functional.cross_entropy(model(ids)["logits"], torch.tensor([0, 2]))
loss.backward()
with torch.no_grad():
    probe = model(ids, output_hidden_states=True)["hidden_states"]
    maps = model(ids, output_attentions=True)["attentions"]
    both = model(ids, output_hidden_states=True, output_attentions=True)
print(len(probe), len(maps), sorted(both))
