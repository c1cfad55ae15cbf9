"""`openxla` CIFAR training with the augmentation moved onto the device and into the compiled train
step: a torchvision-style `RandomCrop` module reflect-pads the batch and picks the crop offsets in
its `get_params` helper the way torchvision does, `torch.randint(0, h - th + 1, size=(1,)).item()`,
then slices the crop out, followed by a random horizontal flip per image."""
import torch
import torch.nn as nn
import torch.nn.functional as F

try:
    import torch_xla.core.xla_model as xm
    BACKEND, device = "openxla", xm.xla_device()
except ImportError:  # CPU run without PyTorch/XLA
    xm, BACKEND, device = None, "eager", torch.device("cpu")

torch.manual_seed(0)


class RandomCrop(nn.Module):
    def __init__(self, size, padding):
        super().__init__()
        self.size, self.padding = size, padding

    @staticmethod
    def get_params(img, output_size):
        h, w = img.shape[-2:]
        th, tw = output_size
        i = torch.randint(0, h - th + 1, size=(1,)).item()
        j = torch.randint(0, w - tw + 1, size=(1,)).item()
        return i, j, th, tw

    def forward(self, img):
        img = F.pad(img, [self.padding] * 4, mode="reflect")
        i, j, h, w = self.get_params(img, (self.size, self.size))
        return img[..., i:i + h, j:j + w]


class RandomHorizontalFlip(nn.Module):
    def forward(self, img):
        flip = torch.rand(img.shape[0], 1, 1, 1, device=img.device) < 0.5
        return torch.where(flip, img.flip(-1), img)


augment = nn.Sequential(RandomCrop(32, padding=4), RandomHorizontalFlip())
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
