"""Manual decoupled weight decay (AdamW-style, applied outside the optimizer): a compiled helper
reads the current learning rate from the optimizer's param_groups, which a cosine scheduler
changes every step, and shrinks the weights in place by lr * weight_decay."""
import torch
import torch.nn as nn

torch.manual_seed(0)
WEIGHT_DECAY = 0.05

model = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 4))
opt = torch.optim.Adam(model.parameters(), lr=1e-2)
sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=6)
decay_params = [p for p in model.parameters() if p.ndim > 1]


@torch.compile
def apply_weight_decay(params):
    lr = opt.param_groups[0]["lr"]
    with torch.no_grad():
        for p in params:
            p.mul_(1 - lr * WEIGHT_DECAY)


for _ in range(6):
    loss = nn.functional.cross_entropy(model(torch.randn(8, 16)), torch.randint(0, 4, (8,)))
    loss.backward()
    apply_weight_decay(decay_params)
    opt.step()
    opt.zero_grad()
    sched.step()
print(float(loss))
