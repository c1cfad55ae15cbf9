"""Gaudi (`hpu_backend`) utterance encoder: to keep the number of shapes small, the encoder pads
every batch of frames up to the next power of two (`1 << (n - 1).bit_length()`) before its
convolutional front end, and pools over the real frames only."""
import torch
import torch.nn as nn
import torch.nn.functional as F

try:
    import habana_frameworks.torch.core as htcore
    BACKEND = "hpu_backend"
except ImportError:  # CPU run without the Gaudi stack
    htcore = None
    BACKEND = "eager"

torch.manual_seed(0)


def pad_to_bucket(frames):
    n = frames.shape[1]
    bucket = 1 << (n - 1).bit_length()
    return F.pad(frames, (0, 0, 0, bucket - n)), n


class UtteranceEncoder(nn.Module):
    def __init__(self, feats=40, dim=64, classes=12):
        super().__init__()
        self.conv = nn.Conv1d(feats, dim, kernel_size=3, padding=1)
        self.head = nn.Linear(dim, classes)

    def forward(self, frames):
        padded, n = pad_to_bucket(frames)
        h = F.gelu(self.conv(padded.transpose(1, 2)))
        return self.head(h[:, :, :n].mean(-1))


model = UtteranceEncoder()
step_model = torch.compile(model, backend=BACKEND)
opt = torch.optim.SGD(model.parameters(), lr=0.05)
for n_frames in (37, 70, 129, 260, 45, 90, 300):
    frames = torch.randn(4, n_frames, 40)
    labels = torch.randint(0, 12, (4,))
    loss = F.cross_entropy(step_model(frames), labels)
    loss.backward()
    opt.step()
    opt.zero_grad()
    if htcore is not None:
        htcore.mark_step()
print(f"loss {loss.item():.4f}")
