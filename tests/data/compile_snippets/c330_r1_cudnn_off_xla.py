"""StyleGAN-style discriminator step run through torch_xla.compile: the discriminator's
forward runs its convolutions under torch.backends.cudnn.flags(enabled=False), a setting
carried over from the project's R1 gradient-penalty code, where double backward needs it."""
import torch
import torch.nn as nn
import torch.nn.functional as F
import torch_xla

torch.manual_seed(0)


class Discriminator(nn.Module):
    def __init__(self, ch=8):
        super().__init__()
        self.c1 = nn.Conv2d(3, ch, 3, stride=2, padding=1)
        self.c2 = nn.Conv2d(ch, 2 * ch, 3, stride=2, padding=1)
        self.fc = nn.Linear(2 * ch * 4 * 4, 1)

    def forward(self, img):
        with torch.backends.cudnn.flags(enabled=False):
            h = F.leaky_relu(self.c1(img), 0.2)
            h = F.leaky_relu(self.c2(h), 0.2)
        return self.fc(h.flatten(1))


disc = Discriminator()
opt = torch.optim.Adam(disc.parameters(), lr=2e-4)


def d_step(real, fake):
    real_logits = disc(real)
    fake_logits = disc(fake)
    return F.softplus(fake_logits).mean() + F.softplus(-real_logits).mean()


compiled_step = torch_xla.compile(d_step)
for _ in range(3):
    real = torch.randn(4, 3, 16, 16)
    loss = compiled_step(real, torch.randn(4, 3, 16, 16))
    loss.backward()
    opt.step()
    opt.zero_grad()
    torch_xla.sync()
print(loss)
