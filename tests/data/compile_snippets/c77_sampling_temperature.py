import torch
import torch.nn as nn

torch.manual_seed(0)

head = nn.Linear(24, 100)
head = torch.compile(head, mode="reduce-overhead")


@torch.compile
def sample(logits, temperature):
    probs = torch.softmax(logits / temperature, dim=-1)
    return torch.multinomial(probs, num_samples=1)


hidden = torch.randn(4, 24)
temperature = 1.2
with torch.no_grad():
    for step in range(10):
        token = sample(head(hidden), temperature)
        temperature = max(0.5, temperature * 0.9)
        hidden = hidden + 0.01 * token.float()
print(token.view(-1))
