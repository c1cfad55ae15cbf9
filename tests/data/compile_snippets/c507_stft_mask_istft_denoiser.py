"""Speech denoising in the time-frequency domain: the compiled model takes a waveform batch,
computes a complex `torch.stft`, predicts a magnitude mask with a small MLP over frames,
and goes back to samples with `torch.istft(..., length=n)`; trained with an L1 loss on samples."""
import torch
import torch.nn as nn

torch.manual_seed(0)


class MaskDenoiser(nn.Module):
    def __init__(self, n_fft=256, hop=64, hidden=128):
        super().__init__()
        self.n_fft, self.hop = n_fft, hop
        bins = n_fft // 2 + 1
        self.register_buffer("window", torch.hann_window(n_fft))
        self.mask = nn.Sequential(nn.Linear(bins, hidden), nn.ReLU(), nn.Linear(hidden, bins),
                                  nn.Sigmoid())

    def forward(self, wav):
        spec = torch.stft(wav, self.n_fft, self.hop, window=self.window, return_complex=True)
        mask = self.mask(spec.abs().log1p().transpose(1, 2)).transpose(1, 2)
        return torch.istft(spec * mask, self.n_fft, self.hop, window=self.window,
                           length=wav.shape[-1])


model = MaskDenoiser()
step_model = torch.compile(model)
opt = torch.optim.Adam(model.parameters(), lr=1e-3)
for step in range(4):
    clean = torch.randn(4, 8000)
    noisy = clean + 0.3 * torch.randn_like(clean)
    loss = (step_model(noisy) - clean).abs().mean()
    loss.backward()
    opt.step()
    opt.zero_grad()
print(f"l1 {loss.item():.4f}")
