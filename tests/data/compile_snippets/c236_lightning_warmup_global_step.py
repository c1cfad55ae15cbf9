"""Lightning-style fine-tuning: the module keeps a reference to the trainer that drives it and scales
its loss by a linear warm-up factor computed from the trainer's global step inside the compiled
training_step."""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class Trainer:
    def __init__(self, max_steps):
        self.global_step = 0
        self.max_steps = max_steps

    def fit(self, module, training_step, batches):
        module.trainer = self
        opt = torch.optim.AdamW(module.parameters(), lr=1e-3)
        for x, y in batches:
            loss = training_step(x, y)
            loss.backward()
            opt.step()
            opt.zero_grad()
            self.global_step += 1
            if self.global_step >= self.max_steps:
                break
        return loss


class Classifier(nn.Module):
    def __init__(self, warmup_steps=50):
        super().__init__()
        self.backbone = nn.Sequential(nn.Linear(32, 64), nn.GELU(), nn.Linear(64, 10))
        self.warmup_steps = warmup_steps
        self.trainer = None

    def training_step(self, x, y):
        logits = self.backbone(x)
        warmup = min(1.0, (self.trainer.global_step + 1) / self.warmup_steps)
        return F.cross_entropy(logits, y, label_smoothing=0.1) * warmup


model = Classifier()
trainer = Trainer(max_steps=12)
batches = [(torch.randn(16, 32), torch.randint(0, 10, (16,))) for _ in range(12)]
loss = trainer.fit(model, torch.compile(model.training_step), batches)
print(f"step {trainer.global_step} loss {loss.item():.4f}")
