"""Transformer-style pretraining on PyTorch/XLA with gradient clipping: a compiled helper clips
the global gradient norm and returns it, and the loop logs the norm every few steps after the
step has been synchronized."""
import torch
import torch.nn as nn
import torch_xla

torch.manual_seed(0)
device = torch_xla.device()

model = nn.Sequential(nn.Embedding(128, 32), nn.Linear(32, 64), nn.GELU(), nn.Linear(64, 128)).to(device)
opt = torch.optim.AdamW(model.parameters(), lr=3e-4)


def clip_gradients(max_norm=1.0):
    return torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm, foreach=True)


clip = torch_xla.compile(clip_gradients)
for step in range(6):
    tokens = torch.randint(0, 128, (4, 16), device=device)
    logits = model(tokens[:, :-1])
    loss = nn.functional.cross_entropy(logits.reshape(-1, 128), tokens[:, 1:].reshape(-1))
    loss.backward()
    grad_norm = clip()
    opt.step()
    opt.zero_grad()
    torch_xla.sync()
    if step % 3 == 0:
        print(f"step {step} loss {loss.item():.4f} grad_norm {grad_norm.item():.4f}")
