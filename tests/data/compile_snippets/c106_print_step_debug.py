import torch
import torch.nn as nn

torch.manual_seed(0)

model = nn.Sequential(nn.Linear(20, 20), nn.ReLU(), nn.Linear(20, 2))
opt = torch.optim.AdamW(model.parameters(), lr=1e-3)


@torch.compile
def forward_loss(x, y, step: int):
    logits = model(x)
    print("step", step)
    return nn.functional.cross_entropy(logits, y)


for step in range(3):
    loss = forward_loss(torch.randn(8, 20), torch.randint(0, 2, (8,)), step)
    loss.backward()
    opt.step()
    opt.zero_grad()
