"""Knowledge distillation where the softening temperature is annealed per epoch: it lives in a
module-level tensor that a helper replaces (through a global statement) at the start of each
epoch, and the compiled KD loss reads it."""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
KD_TEMPERATURE = torch.tensor(4.0)


def set_temperature(epoch, start=4.0, end=1.0, epochs=4):
    global KD_TEMPERATURE
    KD_TEMPERATURE = torch.tensor(start + (end - start) * epoch / (epochs - 1))


@torch.compile
def kd_loss(student_logits, teacher_logits):
    t = KD_TEMPERATURE
    log_p = F.log_softmax(student_logits / t, dim=-1)
    q = F.softmax(teacher_logits / t, dim=-1)
    return F.kl_div(log_p, q, reduction="batchmean") * t * t


teacher = nn.Linear(16, 5).eval()
student = nn.Linear(16, 5)
opt = torch.optim.SGD(student.parameters(), lr=0.1)
for epoch in range(4):
    set_temperature(epoch)
    for _ in range(2):
        x = torch.randn(8, 16)
        with torch.no_grad():
            t_logits = teacher(x)
        loss = kd_loss(student(x), t_logits)
        loss.backward()
        opt.step()
        opt.zero_grad()
print(float(loss))
