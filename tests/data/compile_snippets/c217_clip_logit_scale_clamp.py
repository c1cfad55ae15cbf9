"""CLIP-style contrastive training on Gaudi: image and text towers project into a shared space and
the similarity logits are multiplied by a learned temperature, exposed as a property capped at 100."""
import habana_frameworks.torch.core as htcore
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class DualEncoder(nn.Module):
    def __init__(self, img_dim=64, txt_dim=48, dim=32):
        super().__init__()
        self.image_proj = nn.Sequential(nn.Linear(img_dim, 64), nn.GELU(), nn.Linear(64, dim))
        self.text_proj = nn.Sequential(nn.Linear(txt_dim, 64), nn.GELU(), nn.Linear(64, dim))
        self.log_scale = nn.Parameter(torch.tensor(2.659))

    @property
    def logit_scale(self):
        return self.log_scale.exp().clamp(max=100.0)

    def forward(self, images, texts):
        img = F.normalize(self.image_proj(images), dim=-1)
        txt = F.normalize(self.text_proj(texts), dim=-1)
        logits = self.logit_scale * img @ txt.t()
        labels = torch.arange(images.shape[0])
        return (F.cross_entropy(logits, labels) + F.cross_entropy(logits.t(), labels)) / 2


model = DualEncoder()
cmodel = torch.compile(model, backend="hpu_backend")
opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
for step in range(6):
    images, texts = torch.randn(16, 64), torch.randn(16, 48)
    loss = cmodel(images, texts)
    loss.backward()
    opt.step()
    opt.zero_grad()
    htcore.mark_step()
print(f"loss {loss.item():.4f}")
