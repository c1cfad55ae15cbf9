# Per-class loss totals and counts accumulated with scatter_add_ into device buffers over an epoch
# of training; the per-class mean loss is read once at the end of each epoch.
import torch
import torch_xla
import torch_xla.core.xla_model as xm

device = xm.xla_device()
torch.manual_seed(73)
NUM_CLASSES = 4
model = torch.nn.Linear(8, NUM_CLASSES).to(device)
opt = torch.optim.SGD(model.parameters(), lr=0.2)
for epoch in range(2):
    loss_sum = torch.zeros(NUM_CLASSES, device=device)
    count = torch.zeros(NUM_CLASSES, device=device)
    for step in range(5):
        x = torch.randn(9, 8).to(device)
        y = torch.randint(0, NUM_CLASSES, (9,)).to(device)
        per_sample = torch.nn.functional.cross_entropy(model(x), y, reduction="none")
        loss = per_sample.mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        loss_sum.scatter_add_(0, y, per_sample.detach())
        count.scatter_add_(0, y, torch.ones_like(per_sample))
        xm.mark_step()
    print(f"epoch {epoch}", (loss_sum / count.clamp(min=1)).cpu().tolist())
