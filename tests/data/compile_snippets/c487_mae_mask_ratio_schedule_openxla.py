"""`openxla` masked-autoencoder pre-training with a masking-ratio curriculum: the ratio is raised
from 0.5 to 0.75 over the run and passed to the compiled step, whose MAE-style `random_masking`
keeps `int(L * (1 - mask_ratio))` patch tokens chosen by sorting random noise."""
import torch
import torch.nn as nn
import torch.nn.functional as F

try:
    import torch_xla.core.xla_model as xm
    BACKEND, device = "openxla", xm.xla_device()
except ImportError:  # CPU run without torch_xla
    xm, BACKEND, device = None, "eager", torch.device("cpu")

torch.manual_seed(0)


def random_masking(tokens, mask_ratio):
    n, length, dim = tokens.shape
    len_keep = int(length * (1 - mask_ratio))
    noise = torch.rand(n, length, device=tokens.device)
    ids_keep = torch.argsort(noise, dim=1)[:, :len_keep]
    kept = torch.gather(tokens, 1, ids_keep.unsqueeze(-1).expand(-1, -1, dim))
    return kept, ids_keep


class TinyMAE(nn.Module):
    def __init__(self, patch_dim=48, dim=32):
        super().__init__()
        self.embed = nn.Linear(patch_dim, dim)
        self.encoder = nn.Sequential(nn.Linear(dim, dim), nn.GELU(), nn.Linear(dim, dim))
        self.decoder = nn.Linear(dim, patch_dim)

    def forward(self, patches, mask_ratio):
        kept, ids_keep = random_masking(self.embed(patches), mask_ratio)
        pooled = self.encoder(kept).mean(1, keepdim=True)
        recon = self.decoder(pooled).expand_as(patches)
        return F.mse_loss(recon, patches)


model = TinyMAE().to(device)
train_loss = torch.compile(model, backend=BACKEND)
opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
total = 8
for step in range(total):
    mask_ratio = 0.5 + 0.25 * step / (total - 1)
    patches = torch.randn(4, 64, 48, device=device)
    loss = train_loss(patches, mask_ratio)
    loss.backward()
    opt.step()
    opt.zero_grad()
    if xm is not None:
        xm.mark_step()
print(f"loss {loss.item():.4f}")
