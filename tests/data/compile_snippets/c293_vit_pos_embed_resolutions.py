# A ViT fine-tuned on PyTorch/XLA with progressive resizing: the image size grows over the
# epochs, and the model interpolates its learned position-embedding grid bicubically to each
# new patch grid, as DINO-style ViTs do in interpolate_pos_encoding.
import torch
import torch.nn as nn
import torch.nn.functional as F
import torch_xla.core.xla_model as xm

torch.manual_seed(0)


class ViT(nn.Module):
    def __init__(self, patch=8, dim=32, base_grid=4, n_classes=10):
        super().__init__()
        self.patch = patch
        self.patch_embed = nn.Conv2d(3, dim, patch, stride=patch)
        self.cls_token = nn.Parameter(torch.zeros(1, 1, dim))
        self.pos_embed = nn.Parameter(torch.randn(1, 1 + base_grid * base_grid, dim) * 0.02)
        self.block = nn.TransformerEncoderLayer(dim, 4, 64, batch_first=True, norm_first=True)
        self.head = nn.Linear(dim, n_classes)

    def interpolate_pos_encoding(self, h, w):
        cls_pos, grid_pos = self.pos_embed[:, :1], self.pos_embed[:, 1:]
        side = int(grid_pos.shape[1] ** 0.5)
        grid = grid_pos.reshape(1, side, side, -1).permute(0, 3, 1, 2)
        grid = F.interpolate(grid, size=(h, w), mode="bicubic", align_corners=False)
        return torch.cat([cls_pos, grid.permute(0, 2, 3, 1).reshape(1, h * w, -1)], dim=1)

    def forward(self, images):
        x = self.patch_embed(images)
        b, d, h, w = x.shape
        x = torch.cat([self.cls_token.expand(b, -1, -1), x.flatten(2).transpose(1, 2)], dim=1)
        x = x + self.interpolate_pos_encoding(h, w)
        return self.head(self.block(x)[:, 0])


device = xm.xla_device()
model = ViT().to(device)
compiled = torch.compile(model, backend="openxla")
opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
for epoch, size in enumerate([32, 48, 64, 80]):
    for step in range(2):
        images = torch.randn(2, 3, size, size, device=device)
        labels = torch.randint(0, 10, (2,), device=device)
        loss = F.cross_entropy(compiled(images), labels)
        loss.backward()
        opt.step()
        opt.zero_grad()
        xm.mark_step()
print(loss.item())
