import torch
import torch.nn as nn

torch.manual_seed(0)

encoder = nn.Sequential(nn.Linear(32, 32), nn.LayerNorm(32), nn.Tanh())
encoder = torch.compile(encoder)

with torch.no_grad():
    for batch_size in (8, 12, 16, 20, 24, 28):
        x = torch.randn(batch_size, 32)
        torch._dynamo.mark_static(x, 0)
        emb = encoder(x)
print(emb.shape)
