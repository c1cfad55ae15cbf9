"""`openxla` CIFAR training with the augmentation moved onto the device and into the compiled train
step: a random-translation module shifts each image by up to 4 pixels with a per-image affine
matrix, `F.affine_grid` and `F.grid_sample(..., padding_mode="reflection")` (the device-side
stand-in for pad-and-crop), followed by a random horizontal flip per image."""
import torch
import torch.nn as nn
import torch.nn.functional as F

try:
    import torch_xla.core.xla_model as xm
    BACKEND, device = "openxla", xm.xla_device()
except ImportError:  # CPU run without PyTorch/XLA
    xm, BACKEND, device = None, "eager", torch.device("cpu")

torch.manual_seed(0)


class RandomTranslate(nn.Module):
    def __init__(self, max_pixels, size):
        super().__init__()
        self.max_shift = 2.0 * max_pixels / size  # in grid units, [-1, 1] spans the image

    def forward(self, img):
        b = img.shape[0]
        theta = torch.eye(2, 3, device=img.device).repeat(b, 1, 1)
        theta[:, :, 2] = (torch.rand(b, 2, device=img.device) * 2 - 1) * self.max_shift
        grid = F.affine_grid(theta, list(img.shape), align_corners=False)
        return F.grid_sample(img, grid, padding_mode="reflection", align_corners=False)


class RandomHorizontalFlip(nn.Module):
    def forward(self, img):
        flip = torch.rand(img.shape[0], 1, 1, 1, device=img.device) < 0.5
        return torch.where(flip, img.flip(-1), img)


augment = nn.Sequential(RandomTranslate(4, size=32), RandomHorizontalFlip())
model = nn.Sequential(nn.Conv2d(3, 32, 3, padding=1), nn.BatchNorm2d(32), nn.ReLU(),
                      nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(32, 10)).to(device)
opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9, nesterov=True)


def train_step(images, labels):
    return F.cross_entropy(model(augment(images)), labels)


compiled_step = torch.compile(train_step, backend=BACKEND)
for it in range(5):
    images = torch.randn(16, 3, 32, 32).to(device)
    labels = torch.randint(0, 10, (16,)).to(device)
    loss = compiled_step(images, labels)
    loss.backward()
    opt.step()
    opt.zero_grad()
    if xm is not None:
        xm.mark_step()
print(f"loss {loss.item():.4f}")
