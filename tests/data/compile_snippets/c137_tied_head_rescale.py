"""A small T5-style language model whose output projection may share the embedding matrix; when
it does, the hidden states are rescaled before the projection. Fine-tuned with a compiled
forward."""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class TinyLM(nn.Module):
    def __init__(self, vocab=100, dim=32, tie_word_embeddings=True):
        super().__init__()
        self.dim = dim
        self.embed = nn.Embedding(vocab, dim)
        self.block = nn.TransformerEncoderLayer(dim, 4, 64, batch_first=True, dropout=0.0)
        self.lm_head = nn.Linear(dim, vocab, bias=False)
        if tie_word_embeddings:
            self.lm_head.weight = self.embed.weight

    @property
    def has_tied_head(self):
        return self.lm_head.weight.data_ptr() == self.embed.weight.data_ptr()

    def forward(self, ids, labels):
        h = self.block(self.embed(ids))
        if self.has_tied_head:
            h = h * self.dim ** -0.5
        logits = self.lm_head(h)
        return F.cross_entropy(logits.flatten(0, 1), labels.flatten())


model = TinyLM()
cmodel = torch.compile(model)
opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
for step in range(5):
    ids = torch.randint(0, 100, (4, 12))
    loss = cmodel(ids, ids.roll(-1, dims=1))
    loss.backward()
    opt.step()
    opt.zero_grad(set_to_none=True)
print(loss.detach())
