"""A fine-tuning script that keeps its own AdamW: like torch's optimizers with `capturable=True`,
the per-parameter state is created in `__init__`, the step count a 0-d tensor bumped in place and
the bias corrections computed from it on the device; `step()` is compiled the way the PyTorch
tutorial on compiling the optimizer does it, inside a small `@torch.compile` function."""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class AdamW(torch.optim.Optimizer):
    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-6, weight_decay=0.0):
        super().__init__(params, dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay))
        for group in self.param_groups:
            for p in group["params"]:
                state = self.state[p]
                state["step"] = torch.zeros((), dtype=torch.float32)
                state["exp_avg"] = torch.zeros_like(p)
                state["exp_avg_sq"] = torch.zeros_like(p)

    @torch.no_grad()
    def step(self):
        for group in self.param_groups:
            beta1, beta2 = group["betas"]
            for p in group["params"]:
                if p.grad is None:
                    continue
                state = self.state[p]
                exp_avg, exp_avg_sq = state["exp_avg"], state["exp_avg_sq"]
                state["step"].add_(1)
                exp_avg.mul_(beta1).add_(p.grad, alpha=1.0 - beta1)
                exp_avg_sq.mul_(beta2).addcmul_(p.grad, p.grad, value=1.0 - beta2)
                step_size = group["lr"] * (1.0 - beta2 ** state["step"]).sqrt() / (1.0 - beta1 ** state["step"])
                p.sub_(step_size * exp_avg / exp_avg_sq.sqrt().add_(group["eps"]))
                p.add_(p, alpha=-group["lr"] * group["weight_decay"])


model = nn.Sequential(nn.Linear(32, 64), nn.GELU(), nn.Linear(64, 2))
opt = AdamW(model.parameters(), lr=2e-5, weight_decay=0.01)


@torch.compile(fullgraph=False)
def opt_step():
    opt.step()


for it in range(6):
    x, y = torch.randn(16, 32), torch.randint(0, 2, (16,))
    loss = F.cross_entropy(model(x), y)
    loss.backward()
    opt_step()
    opt.zero_grad()
print(f"loss {loss.item():.4f}")
