"""SwAV-style cluster assignment under torch_xla.compile: Sinkhorn-Knopp normalisation runs
until the column marginals are within a tolerance, written with the while_loop operator."""
import torch
import torch.nn as nn
import torch.nn.functional as F
import torch_xla
from torch._higher_order_ops.while_loop import while_loop

torch.manual_seed(0)
device = torch_xla.device()


def sinkhorn(scores, eps=0.05, max_iters=50, tol=1e-3):
    q = torch.exp(scores / eps).t()  # prototypes x samples
    q = q / q.sum()
    k, n = q.shape

    def cond(i, q):
        col_err = (q.sum(0) * n - 1).abs().max()
        return (i < max_iters) & (col_err > tol)

    def body(i, q):
        q = q / q.sum(1, keepdim=True) / k
        q = q / q.sum(0, keepdim=True) / n
        return i + 1, q

    _, q = while_loop(cond, body, (torch.zeros((), dtype=torch.long, device=q.device), q))
    return (q * n).t()


class SwAVHead(nn.Module):
    def __init__(self, dim=32, n_protos=16):
        super().__init__()
        self.proj = nn.Sequential(nn.Linear(64, dim), nn.ReLU(), nn.Linear(dim, dim))
        self.prototypes = nn.Linear(dim, n_protos, bias=False)

    def forward(self, x):
        z = F.normalize(self.proj(x), dim=1)
        return self.prototypes(z)


def swapped_loss(head, view1, view2, temp=0.1):
    s1, s2 = head(view1), head(view2)
    with torch.no_grad():
        q1, q2 = sinkhorn(s1.detach()), sinkhorn(s2.detach())
    return -0.5 * ((q1 * F.log_softmax(s2 / temp, 1)).sum(1) + (q2 * F.log_softmax(s1 / temp, 1)).sum(1)).mean()


head = SwAVHead().to(device)
opt = torch.optim.SGD(head.parameters(), lr=0.1)
step = torch_xla.compile(swapped_loss)
for _ in range(3):
    x = torch.randn(32, 64, device=device)
    loss = step(head, x + 0.1 * torch.randn_like(x), x + 0.1 * torch.randn_like(x))
    loss.backward()
    opt.step()
    opt.zero_grad()
    torch_xla.sync()
print(f"loss {loss.item():.4f}")
