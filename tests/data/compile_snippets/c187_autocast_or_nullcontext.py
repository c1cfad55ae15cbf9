"""Gaudi fine-tuning script with an optional bfloat16 autocast: a configuration flag picks either
an autocast context or contextlib.nullcontext inside the compiled forward, so the same training
code runs in mixed or full precision."""
import contextlib

import torch
import torch.nn as nn
import habana_frameworks.torch.core as htcore

torch.manual_seed(0)

CONFIG = {"bf16": True, "device_type": "cpu"}  # "hpu" on the cluster


class Classifier(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(32, 64), nn.GELU(), nn.Linear(64, 64), nn.GELU())
        self.head = nn.Linear(64, 5)

    def forward(self, x):
        ctx = (torch.autocast(CONFIG["device_type"], dtype=torch.bfloat16) if CONFIG["bf16"]
               else contextlib.nullcontext())
        with ctx:
            logits = self.head(self.body(x))
        return logits.float()


model = Classifier()
cmodel = torch.compile(model, backend="hpu_backend")
opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
for step in range(4):
    x, y = torch.randn(8, 32), torch.randint(0, 5, (8,))
    loss = nn.functional.cross_entropy(cmodel(x), y)
    loss.backward()
    htcore.mark_step()
    opt.step()
    opt.zero_grad()
    htcore.mark_step()
print(f"loss {loss.item():.4f}")
