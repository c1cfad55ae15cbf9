"""Progressive-growing generator (ProGAN-style): training starts at the lowest resolution and,
at the start of every new stage, `grow()` appends one more upsampling block to the generator's
ModuleList; the generator was wrapped with torch.compile once, before the first stage, and the
same compiled object is used for every stage."""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class UpBlock(nn.Module):
    def __init__(self, ch):
        super().__init__()
        self.conv = nn.Conv2d(ch, ch, 3, padding=1)

    def forward(self, x):
        x = F.interpolate(x, scale_factor=2.0, mode="nearest")
        return F.leaky_relu(self.conv(x), 0.2)


class Generator(nn.Module):
    def __init__(self, z_dim=16, ch=8):
        super().__init__()
        self.ch = ch
        self.stem = nn.Linear(z_dim, ch * 4 * 4)
        self.blocks = nn.ModuleList()
        self.to_rgb = nn.Conv2d(ch, 3, 1)

    def grow(self):
        self.blocks.append(UpBlock(self.ch))

    def forward(self, z):
        x = self.stem(z).view(z.shape[0], self.ch, 4, 4)
        for block in self.blocks:
            x = block(x)
        return torch.tanh(self.to_rgb(x))


gen = Generator()
compiled_gen = torch.compile(gen)
for stage in range(4):
    if stage > 0:
        gen.grow()
    opt = torch.optim.Adam(gen.parameters(), lr=1e-3)
    for _ in range(2):
        fake = compiled_gen(torch.randn(4, 16))
        loss = fake.pow(2).mean()
        loss.backward()
        opt.step()
        opt.zero_grad()
    print(stage, tuple(fake.shape))
