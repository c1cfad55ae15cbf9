"""Language-model pretraining on TPU with PyTorch/XLA: gradients are clipped in a compiled helper
that also refuses to continue when the gradient norm is NaN or infinite, so a diverged run stops
early instead of silently writing garbage checkpoints."""
import torch
import torch.nn as nn
import torch_xla

torch.manual_seed(0)
device = torch_xla.device()

model = nn.Sequential(nn.Embedding(128, 32), nn.Linear(32, 64), nn.GELU(), nn.Linear(64, 128)).to(device)
opt = torch.optim.AdamW(model.parameters(), lr=3e-4)


def clip_gradients(max_norm=1.0):
    return torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm, error_if_nonfinite=True)


clip = torch_xla.compile(clip_gradients)
for step in range(4):
    tokens = torch.randint(0, 128, (4, 16), device=device)
    logits = model(tokens[:, :-1])
    loss = nn.functional.cross_entropy(logits.reshape(-1, 128), tokens[:, 1:].reshape(-1))
    loss.backward()
    grad_norm = clip()
    opt.step()
    opt.zero_grad()
    torch_xla.sync()
print(f"loss {loss.item():.4f} grad_norm {grad_norm.item():.4f}")
