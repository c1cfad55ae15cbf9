"""Knowledge distillation where the teacher has dropout: the compiled training step switches the
teacher to evaluation mode for its forward with an `eval_mode` context manager (which restores
the previous mode on exit) and trains the student towards its soft targets."""
import contextlib

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


@contextlib.contextmanager
def eval_mode(module):
    was_training = module.training
    module.eval()
    try:
        yield module
    finally:
        module.train(was_training)


teacher = nn.Sequential(nn.Linear(20, 64), nn.ReLU(), nn.Dropout(0.3), nn.Linear(64, 5))
student = nn.Sequential(nn.Linear(20, 16), nn.ReLU(), nn.Linear(16, 5))


@torch.compile
def distill_step(x, temperature=2.0):
    with eval_mode(teacher), torch.no_grad():
        soft = F.softmax(teacher(x) / temperature, -1)
    log_p = F.log_softmax(student(x) / temperature, -1)
    return F.kl_div(log_p, soft, reduction="batchmean") * temperature**2


opt = torch.optim.Adam(student.parameters(), lr=1e-3)
for _ in range(5):
    loss = distill_step(torch.randn(32, 20))
    loss.backward()
    opt.step()
    opt.zero_grad()
print(f"loss {loss.item():.4f}, teacher.training={teacher.training}")
