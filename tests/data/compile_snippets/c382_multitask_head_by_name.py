"""Multi-task fine-tuning of a shared encoder with one classification head per task.

The heads are registered as attributes named after the task index (`head_0` ... `head_3`), as
in older GLUE-style multi-task code, and `forward` looks the head up by building that name from
the task index it is given. Training cycles round-robin over the four tasks, one batch each.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
NUM_TASKS, DIM, CLASSES = 4, 32, 3


class MultiTaskModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = nn.Sequential(nn.Linear(DIM, DIM), nn.GELU(), nn.LayerNorm(DIM))
        for t in range(NUM_TASKS):
            self.add_module(f"head_{t}", nn.Linear(DIM, CLASSES))

    def head_for(self, task):
        return getattr(self, f"head_{task}")

    def forward(self, x, task):
        return self.head_for(task)(self.encoder(x).mean(1))


model = MultiTaskModel()
compiled = torch.compile(model)
opt = torch.optim.AdamW(model.parameters(), lr=1e-3)

for step in range(8):
    task = step % NUM_TASKS
    x, y = torch.randn(8, 10, DIM), torch.randint(0, CLASSES, (8,))
    loss = F.cross_entropy(compiled(x, task), y)
    loss.backward()
    opt.step()
    opt.zero_grad()
print(round(loss.item(), 3))
