"""FlexiViT-style training on XLA: the patch size is drawn per step from a list, and the compiled
patch embedding resizes its learned 16x16 kernel to that size with bilinear interpolation
before a convolution with the same stride."""
import random

import torch
import torch.nn as nn
import torch.nn.functional as F

try:
    import torch_xla
    device = torch_xla.device()
    compile_step = torch_xla.compile
except ImportError:
    torch_xla, device = None, torch.device("cpu")
    compile_step = lambda f: torch.compile(f, backend="eager")

random.seed(0)
torch.manual_seed(0)


class FlexiPatchEmbed(nn.Module):
    def __init__(self, dim=32, base=16):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(dim, 3, base, base) * 0.02)
        self.head = nn.Linear(dim, 10)

    def forward(self, images, patch):
        w = F.interpolate(self.weight, size=(patch, patch), mode="bilinear", align_corners=False)
        tokens = F.conv2d(images, w, stride=patch).flatten(2).transpose(1, 2)
        return self.head(tokens.mean(1))


model = FlexiPatchEmbed().to(device)
opt = torch.optim.AdamW(model.parameters(), lr=1e-3)


def loss_fn(images, labels, patch):
    return F.cross_entropy(model(images, patch), labels)


step_fn = compile_step(loss_fn)
for step in range(8):
    patch = random.choice([8, 12, 16])
    loss = step_fn(torch.randn(4, 3, 48, 48), torch.randint(0, 10, (4,)), patch)
    loss.backward()
    opt.step()
    opt.zero_grad()
print(f"loss {loss.item():.4f}")
