"""`torch_xla.compile` language-model step on variable-length packed batches: the summed token
loss is normalized by the number of token positions, `math.prod(logits.shape[:-1])`, so that the
reported loss is per token whatever the batch's length."""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

try:
    import torch_xla
    compile_step = torch_xla.compile
except ImportError:  # CPU run without torch_xla
    compile_step = torch.compile

torch.manual_seed(0)
VOCAB = 64

model = nn.Sequential(nn.Embedding(VOCAB, 32), nn.Linear(32, 32), nn.GELU(), nn.Linear(32, VOCAB))


def lm_loss(ids):
    logits = model(ids[:, :-1])
    total = F.cross_entropy(logits.reshape(-1, VOCAB), ids[:, 1:].reshape(-1), reduction="sum")
    return total / math.prod(logits.shape[:-1])


step = compile_step(lm_loss)
opt = torch.optim.AdamW(model.parameters(), lr=3e-3)
for seq_len in (17, 33, 25, 49, 41, 65):
    loss = step(torch.randint(0, VOCAB, (4, seq_len)))
    loss.backward()
    opt.step()
    opt.zero_grad()
print(f"loss {loss.item():.4f}")
