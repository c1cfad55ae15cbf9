"""`torch_xla.compile` DDPM training in the style of the widely copied denoising-diffusion code: the
compiled `p_losses` draws a timestep per sample with `torch.randint`, reads the noise schedule with
the `extract(a, t, x_shape)` helper (`a.gather(-1, t)` reshaped to
`(b, *((1,) * (len(x_shape) - 1)))`), noises the images with `q_sample` and regresses the noise."""
import torch
import torch.nn as nn
import torch.nn.functional as F

try:
    import torch_xla
    compile_fn, device = torch_xla.compile, torch_xla.device()
except ImportError:  # CPU run without PyTorch/XLA
    torch_xla, compile_fn, device = None, torch.compile, torch.device("cpu")

torch.manual_seed(0)
TIMESTEPS = 1000


def extract(a, t, x_shape):
    b, *_ = t.shape
    out = a.gather(-1, t)
    return out.reshape(b, *((1,) * (len(x_shape) - 1)))


betas = torch.linspace(1e-4, 0.02, TIMESTEPS, dtype=torch.float64)
alphas_cumprod = torch.cumprod(1.0 - betas, dim=0)
sqrt_alphas_cumprod = alphas_cumprod.sqrt().float().to(device)
sqrt_one_minus_alphas_cumprod = (1.0 - alphas_cumprod).sqrt().float().to(device)


class TinyUNet(nn.Module):
    def __init__(self, ch=32):
        super().__init__()
        self.time_mlp = nn.Sequential(nn.Linear(1, ch), nn.SiLU(), nn.Linear(ch, ch))
        self.inp = nn.Conv2d(3, ch, 3, padding=1)
        self.out = nn.Conv2d(ch, 3, 3, padding=1)

    def forward(self, x, t):
        emb = self.time_mlp(t.float().unsqueeze(-1) / TIMESTEPS)
        return self.out(F.silu(self.inp(x) + emb[:, :, None, None]))


def q_sample(x_start, t, noise):
    return (extract(sqrt_alphas_cumprod, t, x_start.shape) * x_start
            + extract(sqrt_one_minus_alphas_cumprod, t, x_start.shape) * noise)


model = TinyUNet().to(device)
opt = torch.optim.Adam(model.parameters(), lr=2e-4)


def p_losses(x_start):
    b = x_start.shape[0]
    t = torch.randint(0, TIMESTEPS, (b,), device=x_start.device).long()
    noise = torch.randn_like(x_start)
    x_noisy = q_sample(x_start, t, noise)
    return F.mse_loss(model(x_noisy, t), noise)


train_loss = compile_fn(p_losses)
for it in range(4):
    loss = train_loss(torch.randn(8, 3, 16, 16).to(device))
    loss.backward()
    opt.step()
    opt.zero_grad()
    if torch_xla is not None:
        torch_xla.sync()
print(f"loss {loss.item():.4f}")
