"""Gaudi (`hpu_backend`) utterance encoder fed by a bucketing collate: the data loader pads each
batch of frames up to the next power of two and passes the true lengths as a tensor, so the
compiled encoder sees a handful of padded sizes and masks the padding itself."""
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


def bucket_collate(utterances):
    n = max(u.shape[0] for u in utterances)
    bucket = 1 << (n - 1).bit_length()
    frames = torch.stack([F.pad(u, (0, 0, 0, bucket - u.shape[0])) for u in utterances])
    lengths = torch.tensor([u.shape[0] for u in utterances])
    return frames, lengths


class UtteranceEncoder(nn.Module):
    def __init__(self, feats=40, dim=64, classes=12):
        super().__init__()
        self.conv = nn.Conv1d(feats, dim, kernel_size=3, padding=1)
        self.head = nn.Linear(dim, classes)

    def forward(self, frames, lengths):
        h = F.gelu(self.conv(frames.transpose(1, 2)))
        mask = torch.arange(h.shape[-1]) < lengths[:, None]
        pooled = (h * mask[:, None]).sum(-1) / lengths[:, None]
        return self.head(pooled)


model = UtteranceEncoder()
step_model = torch.compile(model, backend=BACKEND)
opt = torch.optim.SGD(model.parameters(), lr=0.05)
for n_frames in (37, 70, 129, 260, 45, 90, 300):
    batch = [torch.randn(n_frames - 3 * i, 40) for i in range(4)]
    frames, lengths = bucket_collate(batch)
    labels = torch.randint(0, 12, (4,))
    loss = F.cross_entropy(step_model(frames, lengths), labels)
    loss.backward()
    opt.step()
    opt.zero_grad()
    if htcore is not None:
        htcore.mark_step()
print(f"loss {loss.item():.4f}")
