"""MoCo-style contrastive pretraining: the key encoder's embeddings are pushed into a fixed-size
negative queue after each step, at a write position kept in a buffer, as the reference code does."""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class MoCoHead(nn.Module):
    def __init__(self, dim=32, queue_size=64, temperature=0.07):
        super().__init__()
        self.proj = nn.Sequential(nn.Linear(48, 64), nn.ReLU(), nn.Linear(64, dim))
        self.temperature = temperature
        self.register_buffer("queue", F.normalize(torch.randn(queue_size, dim), dim=1))
        self.register_buffer("queue_ptr", torch.zeros(1, dtype=torch.long))

    @torch.no_grad()
    def _dequeue_and_enqueue(self, keys):
        batch = keys.shape[0]
        ptr = int(self.queue_ptr)
        self.queue[ptr:ptr + batch] = keys
        self.queue_ptr[0] = (ptr + batch) % self.queue.shape[0]

    def forward(self, q_in, k_in):
        q = F.normalize(self.proj(q_in), dim=1)
        with torch.no_grad():
            k = F.normalize(self.proj(k_in), dim=1)
        pos = (q * k).sum(dim=1, keepdim=True)
        neg = q @ self.queue.clone().t()
        logits = torch.cat([pos, neg], dim=1) / self.temperature
        loss = F.cross_entropy(logits, torch.zeros(q.shape[0], dtype=torch.long))
        self._dequeue_and_enqueue(k)
        return loss


head = MoCoHead()
chead = torch.compile(head)
opt = torch.optim.SGD(head.parameters(), lr=0.03, momentum=0.9)
for step in range(6):
    x = torch.randn(16, 48)
    loss = chead(x + 0.1 * torch.randn_like(x), x + 0.1 * torch.randn_like(x))
    loss.backward()
    opt.step()
    opt.zero_grad()
print(f"loss {loss.item():.4f}")
