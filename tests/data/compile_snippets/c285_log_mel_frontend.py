# A keyword-spotting model whose compiled forward starts from raw waveforms: a Hann-windowed
# torch.stft with complex output, power spectrum, a mel filterbank matrix and a log, then a
# small convolutional classifier.
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


def mel_filterbank(n_freqs, n_mels, sample_rate):
    def hz_to_mel(f):
        return 2595.0 * math.log10(1.0 + f / 700.0)

    mels = torch.linspace(hz_to_mel(0.0), hz_to_mel(sample_rate / 2), n_mels + 2)
    hz = 700.0 * (10 ** (mels / 2595.0) - 1.0)
    bins = torch.linspace(0, sample_rate / 2, n_freqs)
    lower, center, upper = hz[:-2, None], hz[1:-1, None], hz[2:, None]
    up = (bins[None] - lower) / (center - lower)
    down = (upper - bins[None]) / (upper - center)
    return torch.clamp(torch.min(up, down), min=0.0).T


class KeywordSpotter(nn.Module):
    def __init__(self, n_fft=256, hop=128, n_mels=32, n_keywords=10, sample_rate=16000):
        super().__init__()
        self.n_fft, self.hop = n_fft, hop
        self.register_buffer("window", torch.hann_window(n_fft))
        self.register_buffer("mel_fb", mel_filterbank(n_fft // 2 + 1, n_mels, sample_rate))
        self.conv = nn.Sequential(nn.Conv1d(n_mels, 32, 3, padding=1), nn.ReLU(), nn.Conv1d(32, 32, 3, padding=1))
        self.head = nn.Linear(32, n_keywords)

    def log_mel(self, wav):
        spec = torch.stft(wav, self.n_fft, hop_length=self.hop, window=self.window, return_complex=True)
        power = spec.abs().pow(2)
        mel = torch.matmul(power.transpose(1, 2), self.mel_fb)
        return torch.log(mel + 1e-6).transpose(1, 2)

    def forward(self, wav):
        feats = self.log_mel(wav)
        feats = (feats - feats.mean(dim=-1, keepdim=True)) / (feats.std(dim=-1, keepdim=True) + 1e-5)
        return self.head(self.conv(feats).mean(dim=-1))


model = KeywordSpotter()
compiled = torch.compile(model)
opt = torch.optim.Adam(model.parameters(), lr=1e-3)
for step in range(4):
    wav = torch.randn(4, 16000) * 0.1
    labels = torch.randint(0, 10, (4,))
    loss = F.cross_entropy(compiled(wav), labels)
    loss.backward()
    opt.step()
    opt.zero_grad()
print(loss.item())
