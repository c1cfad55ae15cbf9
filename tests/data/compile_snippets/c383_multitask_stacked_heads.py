"""Multi-task fine-tuning of a shared encoder with one classification head per task.

The four heads are kept as one stacked weight of shape (tasks, dim, classes); each batch carries
its task index as a tensor, and `forward` picks the head's weight and bias by indexing the stacks
with it before an `einsum`. Training cycles round-robin over the four tasks, one batch each.
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
        self.head_weight = nn.Parameter(torch.randn(NUM_TASKS, DIM, CLASSES) * DIM ** -0.5)
        self.head_bias = nn.Parameter(torch.zeros(NUM_TASKS, CLASSES))

    def forward(self, x, task_ids):
        h = self.encoder(x).mean(1)
        w, b = self.head_weight[task_ids], self.head_bias[task_ids]
        return torch.einsum("bd,bdc->bc", h, w) + b


model = MultiTaskModel()
compiled = torch.compile(model)
opt = torch.optim.AdamW(model.parameters(), lr=1e-3)

for step in range(8):
    task_ids = torch.full((8,), step % NUM_TASKS)
    x, y = torch.randn(8, 10, DIM), torch.randint(0, CLASSES, (8,))
    loss = F.cross_entropy(compiled(x, task_ids), y)
    loss.backward()
    opt.step()
    opt.zero_grad()
print(round(loss.item(), 3))
