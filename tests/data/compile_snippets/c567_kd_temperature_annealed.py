"""Knowledge distillation of a small classifier with a compiled distillation loss module (Hinton KD:
KL divergence between the softened student and teacher distributions, scaled by `T ** 2`, mixed
with the hard-label cross-entropy); a curriculum callback lowers the loss module's float
temperature attribute `T` from 4.0 by 0.5 at the start of every epoch."""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class DistillationLoss(nn.Module):
    def __init__(self, T=4.0, alpha=0.9):
        super().__init__()
        self.T, self.alpha = T, alpha

    def forward(self, student_logits, teacher_logits, labels):
        soft = F.kl_div(F.log_softmax(student_logits / self.T, dim=-1),
                        F.softmax(teacher_logits / self.T, dim=-1), reduction="batchmean")
        hard = F.cross_entropy(student_logits, labels)
        return self.alpha * soft * self.T ** 2 + (1.0 - self.alpha) * hard


class TemperatureCurriculum:
    def __init__(self, criterion, start=4.0, step=0.5, minimum=1.0):
        self.criterion, self.start, self.step, self.minimum = criterion, start, step, minimum

    def on_epoch_start(self, epoch):
        self.criterion.T = max(self.minimum, self.start - self.step * epoch)


teacher = nn.Sequential(nn.Linear(32, 256), nn.ReLU(), nn.Linear(256, 10)).eval()
student = nn.Sequential(nn.Linear(32, 32), nn.ReLU(), nn.Linear(32, 10))
criterion = DistillationLoss()
kd_loss = torch.compile(criterion)
curriculum = TemperatureCurriculum(criterion)
opt = torch.optim.Adam(student.parameters(), lr=1e-3)
for epoch in range(6):
    curriculum.on_epoch_start(epoch)
    for it in range(3):
        x, y = torch.randn(32, 32), torch.randint(0, 10, (32,))
        with torch.no_grad():
            teacher_logits = teacher(x)
        loss = kd_loss(student(x), teacher_logits, y)
        loss.backward()
        opt.step()
        opt.zero_grad()
print(f"T {criterion.T} loss {loss.item():.4f}")
