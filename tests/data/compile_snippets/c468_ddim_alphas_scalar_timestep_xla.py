"""`torch_xla.compile` DDIM sampler for a small denoiser: the scheduler keeps its
`alphas_cumprod` table as a tensor (computed once with `torch.cumprod`), the sampling loop walks
the scheduler's timesteps tensor one element at a time, and the compiled update reads the current
and previous entries of the table with those timesteps."""
import torch
import torch.nn as nn

try:
    import torch_xla
    compile_step = torch_xla.compile
except ImportError:  # CPU run without torch_xla
    compile_step = torch.compile

torch.manual_seed(0)


class DDIMScheduler:
    def __init__(self, train_steps=1000):
        betas = torch.linspace(1e-4, 0.02, train_steps)
        self.alphas_cumprod = torch.cumprod(1.0 - betas, dim=0)


class Denoiser(nn.Module):
    def __init__(self, dim=16):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(dim + 1, 64), nn.SiLU(), nn.Linear(64, dim))

    def forward(self, x, t):
        return self.net(torch.cat([x, t.float().expand(x.shape[0], 1) / 1000], -1))


scheduler, model = DDIMScheduler(), Denoiser().eval()


def ddim_step(x, t, t_prev):
    a_t = scheduler.alphas_cumprod[t]
    a_prev = scheduler.alphas_cumprod[t_prev]
    eps = model(x, t)
    x0 = (x - (1 - a_t) ** 0.5 * eps) / a_t ** 0.5
    return a_prev ** 0.5 * x0 + (1 - a_prev) ** 0.5 * eps


step = compile_step(ddim_step)
timesteps = torch.linspace(999, 0, 7).long()
x = torch.randn(4, 16)
with torch.no_grad():
    for t, t_prev in zip(timesteps[:-1], timesteps[1:]):
        x = step(x, t, t_prev)
print(x.norm().item())
