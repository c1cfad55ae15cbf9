"""Gaudi MoE fine-tuning: the trainer logs the gradient norm of the expert weights with a
compiled helper after each backward; experts the top-1 router did not pick have no gradient."""
import torch
import torch.nn as nn
import torch.nn.functional as F
import habana_frameworks.torch.core as htcore

torch.manual_seed(0)
N_EXPERTS, DIM = 4, 16


class Top1MoE(nn.Module):
    def __init__(self):
        super().__init__()
        self.router = nn.Linear(DIM, N_EXPERTS)
        self.experts = nn.ModuleList(nn.Linear(DIM, DIM) for _ in range(N_EXPERTS))

    def forward(self, x):
        choice = self.router(x).argmax(-1)
        out = torch.zeros_like(x)
        for e in choice.unique().tolist():  # eager model: only the chosen experts run
            rows = choice == e
            out[rows] = self.experts[e](x[rows])
        return out


@torch.compile(backend="hpu_backend")
def grad_norm(params):
    norms = [p.grad.norm() for p in params if p.grad is not None]
    return torch.stack(norms).norm()


model = Top1MoE()
opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
expert_params = [p for e in model.experts for p in e.parameters()]
for step in range(8):
    x = torch.randn(3, DIM)
    F.mse_loss(model(x), x).backward()
    htcore.mark_step()
    print(f"step {step}: expert grad norm {grad_norm(expert_params).item():.3f}")
    opt.step()
    opt.zero_grad(set_to_none=True)
    htcore.mark_step()
