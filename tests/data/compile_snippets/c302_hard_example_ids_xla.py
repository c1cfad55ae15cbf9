# Image classification on PyTorch/XLA with online hard-example mining: batches carry the
# sample ids next to the pixels, the compiled step returns the mean loss and a per-sample loss
# table keyed by id, and the host keeps the hardest ids for re-sampling in the next epoch.
import torch
import torch.nn as nn
import torch.nn.functional as F
import torch_xla

torch.manual_seed(0)

device = torch_xla.device()
model = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.ReLU(), nn.AdaptiveAvgPool2d(1), nn.Flatten(),
                      nn.Linear(8, 10)).to(device)
opt = torch.optim.SGD(model.parameters(), lr=0.1)


def train_step(batch):
    logits = model(batch["pixels"])
    per_sample = F.cross_entropy(logits, batch["labels"], reduction="none")
    losses_by_id = dict(zip(batch["ids"], per_sample.detach()))
    return per_sample.mean(), losses_by_id


step_fn = torch_xla.compile(train_step)
hardest = {}
for i in range(10):
    batch = {
        "pixels": torch.randn(4, 3, 8, 8, device=device),
        "labels": torch.randint(0, 10, (4,), device=device),
        "ids": [f"img_{4 * i + j:05d}" for j in range(4)],
    }
    loss, losses_by_id = step_fn(batch)
    loss.backward()
    opt.step()
    opt.zero_grad()
    torch_xla.sync()
    hardest.update(losses_by_id)
top = sorted(hardest, key=lambda k: hardest[k].item(), reverse=True)[:5]
print(top)
