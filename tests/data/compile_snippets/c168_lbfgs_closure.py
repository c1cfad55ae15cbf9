"""Full-batch logistic regression fitted with L-BFGS; the loss-and-gradient closure that
L-BFGS calls repeatedly per step is compiled for speed."""
import torch

torch.manual_seed(0)
X = torch.randn(200, 5)
y = (X @ torch.tensor([1.0, -2.0, 0.5, 0.0, 3.0]) > 0).float()
w = torch.zeros(5, requires_grad=True)
b = torch.zeros(1, requires_grad=True)
opt = torch.optim.LBFGS([w, b], lr=0.5, max_iter=5)


@torch.compile
def closure():
    opt.zero_grad()
    logits = X @ w + b
    loss = torch.nn.functional.binary_cross_entropy_with_logits(logits, y) + 1e-3 * w.pow(2).sum()
    loss.backward()
    return loss


for _ in range(3):
    loss = opt.step(closure)
print(loss.item())
