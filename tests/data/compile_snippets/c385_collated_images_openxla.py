"""Object-counting detector served through the `openxla` backend, batched by the server.

Requests arrive in groups of varying size from a queue; the server's collate step stacks each
group's images into one (N, 3, H, W) tensor before calling the compiled network, which normalizes
the batch with broadcast mean/std buffers.
"""
import torch
import torch.nn as nn

try:
    import torch_xla
except ImportError:  # no PyTorch/XLA here: run on the CPU with the default backend
    torch_xla = None

torch.manual_seed(0)
device = torch_xla.device() if torch_xla else torch.device("cpu")


class CountingDetector(nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("mean", torch.tensor([0.485, 0.456, 0.406]).view(1, 3, 1, 1))
        self.register_buffer("std", torch.tensor([0.229, 0.224, 0.225]).view(1, 3, 1, 1))
        self.backbone = nn.Sequential(nn.Conv2d(3, 16, 3, stride=2, padding=1), nn.ReLU(),
                                      nn.Conv2d(16, 16, 3, stride=2, padding=1), nn.ReLU())
        self.density = nn.Conv2d(16, 1, 1)

    def forward(self, batch):
        batch = (batch - self.mean) / self.std
        return self.density(self.backbone(batch)).relu().sum(dim=(1, 2, 3))


def collate(images):
    return torch.stack(images)


model = CountingDetector().to(device).eval()
compiled = torch.compile(model, backend="openxla" if torch_xla else "eager")

queue_sizes = [4, 4, 3, 4, 2, 4, 5, 4]
with torch.no_grad():
    for n in queue_sizes:
        images = [torch.rand(3, 64, 64, device=device) for _ in range(n)]
        counts = compiled(collate(images))
print(counts.shape)
