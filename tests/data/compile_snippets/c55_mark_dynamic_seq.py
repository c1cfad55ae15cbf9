import torch
import torch.nn as nn

torch.manual_seed(0)
lstm_like = nn.Linear(12, 12)
step = torch.compile(lambda h: torch.tanh(lstm_like(h)).mean(dim=1), dynamic=False)

with torch.no_grad():
    for seq in range(5, 25, 2):
        h = torch.randn(3, seq, 12)
        torch._dynamo.mark_dynamic(h, 1)
        step(h)
