"""PyTorch/XLA: a training loop that reads the loss on the host every step and branches on it.

Run: PJRT_DEVICE=CPU PT_XLA_DEBUG_LEVEL=2 python host_reads.py > host_reads.log 2>&1
"""
import torch
import torch_xla
import torch_xla.core.xla_model as xm

device = torch_xla.device()
torch.manual_seed(0)
model = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.ReLU(), torch.nn.Linear(16, 1)).to(device)
optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
data = [(torch.randn(4, 8), torch.randn(4, 1)) for _ in range(3)]


def train():
    for x, y in data:
        x, y = x.to(device), y.to(device)
        optimizer.zero_grad()
        loss = torch.nn.functional.mse_loss(model(x), y)
        loss.backward()
        if loss > 10:
            loss = loss * 0.5
        print("loss", loss.item())
        optimizer.step()
        xm.mark_step()


train()
