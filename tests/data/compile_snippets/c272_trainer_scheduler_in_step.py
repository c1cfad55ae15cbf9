"""An HF Trainer-style class whose compute_loss method is compiled in __init__; an on-step-end
hook that compute_loss calls advances the linear warm-up learning-rate scheduler."""
import torch
import torch.nn as nn

torch.manual_seed(0)


class MiniTrainer:
    def __init__(self, model, warmup=3):
        self.model = model
        self.optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
        self.lr_scheduler = torch.optim.lr_scheduler.LambdaLR(
            self.optimizer, lambda s: min(1.0, (s + 1) / warmup))
        self.compute_loss = torch.compile(self.compute_loss)

    def on_step_end(self):
        self.lr_scheduler.step()

    def compute_loss(self, inputs, labels):
        logits = self.model(inputs)
        loss = nn.functional.cross_entropy(logits, labels)
        self.on_step_end()
        return loss

    def train(self, batches):
        for inputs, labels in batches:
            loss = self.compute_loss(inputs, labels)
            loss.backward()
            self.optimizer.step()
            self.optimizer.zero_grad()
        return loss


model = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 4))
trainer = MiniTrainer(model)
batches = [(torch.randn(8, 16), torch.randint(0, 4, (8,))) for _ in range(4)]
print(float(trainer.train(batches)), trainer.lr_scheduler.get_last_lr())
