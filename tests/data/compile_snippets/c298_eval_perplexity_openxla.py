# Evaluation of a small causal LM on PyTorch/XLA: the eval step is compiled with the openxla
# backend and returns the batch loss together with its perplexity, which the loop averages.
import math

import torch
import torch.nn as nn
import torch.nn.functional as F
import torch_xla.core.xla_model as xm

torch.manual_seed(0)


class TinyLM(nn.Module):
    def __init__(self, vocab=64, dim=32):
        super().__init__()
        self.embed = nn.Embedding(vocab, dim)
        self.mix = nn.Conv1d(dim, dim, kernel_size=3, padding=2)
        self.head = nn.Linear(dim, vocab)

    def forward(self, ids):
        h = self.mix(self.embed(ids).transpose(1, 2))[..., : ids.shape[1]]
        return self.head(torch.tanh(h.transpose(1, 2)))


device = xm.xla_device()
model = TinyLM().to(device).eval()


@torch.compile(backend="openxla")
def eval_step(input_ids, labels):
    logits = model(input_ids)
    loss = F.cross_entropy(logits.flatten(0, 1), labels.flatten())
    return loss, math.exp(loss)


total_ppl = 0.0
with torch.no_grad():
    for batch in range(4):
        ids = torch.randint(0, 64, (2, 17), device=device)
        loss, ppl = eval_step(ids[:, :-1], ids[:, 1:])
        xm.mark_step()
        total_ppl += ppl
print(total_ppl / 4)
