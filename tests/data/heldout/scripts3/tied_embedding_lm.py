# A tiny language model whose output projection shares its weight with the input embedding
# (weight tying), trained on random token windows; perplexity printed at the end of each epoch.
import math

import torch
import torch_xla
import torch_xla.core.xla_model as xm

device = xm.xla_device()
torch.manual_seed(67)


class TinyLM(torch.nn.Module):
    def __init__(self, vocab=50, dim=16):
        super().__init__()
        self.embed = torch.nn.Embedding(vocab, dim)
        self.mix = torch.nn.Linear(dim, dim)
        self.lm_head = torch.nn.Linear(dim, vocab, bias=False)
        self.lm_head.weight = self.embed.weight

    def forward(self, tokens):
        return self.lm_head(torch.tanh(self.mix(self.embed(tokens))))


model = TinyLM().to(device)
opt = torch.optim.AdamW(model.parameters(), lr=2e-3, weight_decay=0.01)
for epoch in range(2):
    for step in range(5):
        window = torch.randint(0, 50, (4, 9)).to(device)
        logits = model(window[:, :-1])
        loss = torch.nn.functional.cross_entropy(logits.reshape(-1, 50), window[:, 1:].reshape(-1))
        opt.zero_grad()
        loss.backward()
        opt.step()
        xm.mark_step()
    print(f"epoch {epoch} ppl {math.exp(loss.item()):.2f}")
