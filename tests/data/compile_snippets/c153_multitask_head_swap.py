"""Multi-task fine-tuning with one shared encoder and a head per task (every head as wide as the
largest label set, sliced to the task's labels): before each task's batch the trainer points the
model's active head at that task's head, and the compiled model is reused for all tasks."""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)

TASKS = {"sst2": 2, "mnli": 3, "qqp": 2, "stsb": 1, "cola": 2}


class MultiTaskModel(nn.Module):
    def __init__(self, dim=32):
        super().__init__()
        self.encoder = nn.Sequential(nn.Linear(16, dim), nn.GELU(), nn.Linear(dim, dim))
        self.heads = nn.ModuleDict({t: nn.Linear(dim, max(TASKS.values())) for t in TASKS})
        self.head = self.heads["sst2"]

    def set_task(self, task):
        self.head = self.heads[task]

    def forward(self, x):
        return self.head(self.encoder(x))


model = MultiTaskModel()
cmodel = torch.compile(model)
opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
for step in range(10):
    task = list(TASKS)[step % len(TASKS)]
    model.set_task(task)
    logits = cmodel(torch.randn(8, 16))[:, :TASKS[task]]
    if TASKS[task] == 1:
        loss = F.mse_loss(logits.squeeze(-1), torch.rand(8))
    else:
        loss = F.cross_entropy(logits, torch.randint(0, TASKS[task], (8,)))
    loss.backward()
    opt.step()
    opt.zero_grad()
print(loss.detach())
