# A HiFi-GAN-style vocoder generator trained on Gaudi: transposed-convolution upsampling and
# dilated residual blocks whose convolutions carry weight_norm parametrizations
# (torch.nn.utils.parametrizations), as in the original vocoder code.
import habana_frameworks.torch.core as htcore
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.utils.parametrizations import weight_norm

torch.manual_seed(0)

LRELU_SLOPE = 0.1


class ResBlock(nn.Module):
    def __init__(self, channels, kernel_size=3, dilations=(1, 3, 5)):
        super().__init__()
        self.convs = nn.ModuleList(
            weight_norm(nn.Conv1d(channels, channels, kernel_size, dilation=d, padding=d * (kernel_size - 1) // 2))
            for d in dilations
        )

    def forward(self, x):
        for conv in self.convs:
            x = x + conv(F.leaky_relu(x, LRELU_SLOPE))
        return x


class Generator(nn.Module):
    def __init__(self, n_mels=16, channels=32, upsample_rates=(4, 4)):
        super().__init__()
        self.conv_pre = weight_norm(nn.Conv1d(n_mels, channels, 7, padding=3))
        self.ups = nn.ModuleList()
        self.resblocks = nn.ModuleList()
        ch = channels
        for rate in upsample_rates:
            self.ups.append(weight_norm(nn.ConvTranspose1d(ch, ch // 2, rate * 2, rate, padding=rate // 2)))
            ch //= 2
            self.resblocks.append(ResBlock(ch))
        self.conv_post = weight_norm(nn.Conv1d(ch, 1, 7, padding=3))

    def forward(self, mel):
        x = self.conv_pre(mel)
        for up, block in zip(self.ups, self.resblocks):
            x = block(up(F.leaky_relu(x, LRELU_SLOPE)))
        return torch.tanh(self.conv_post(F.leaky_relu(x)))


generator = Generator()
vocoder = torch.compile(generator, backend="hpu_backend")
opt = torch.optim.AdamW(generator.parameters(), lr=2e-4, betas=(0.8, 0.99))
for step in range(4):
    mel = torch.randn(2, 16, 20)
    audio = torch.randn(2, 1, 320) * 0.1
    loss = F.l1_loss(vocoder(mel), audio)
    loss.backward()
    opt.step()
    opt.zero_grad()
    htcore.mark_step()
print(loss.item())
