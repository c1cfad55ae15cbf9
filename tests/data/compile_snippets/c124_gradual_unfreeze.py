"""Fine-tune a pretrained 6-layer encoder ULMFiT-style with gradual unfreezing.

Everything below the head starts frozen; at the start of each epoch one more layer, from the top
down, is unfrozen. The model is compiled once before training.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)

encoder = nn.Sequential(*[nn.Sequential(nn.Linear(32, 32), nn.GELU()) for _ in range(6)])
head = nn.Linear(32, 3)
model = nn.Sequential(encoder, head)
encoder.requires_grad_(False)

cmodel = torch.compile(model)
opt = torch.optim.AdamW(model.parameters(), lr=1e-3)

for epoch in range(6):
    encoder[len(encoder) - 1 - epoch].requires_grad_(True)
    for _ in range(3):
        x, y = torch.randn(8, 32), torch.randint(0, 3, (8,))
        loss = F.cross_entropy(cmodel(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
    trainable = sum(p.numel() for p in model.parameters() if p.requires_grad)
    print(epoch, trainable, float(loss))
