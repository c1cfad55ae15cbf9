"""Video retrieval: the encoder's summary heads pool the (batch, frames, patches, dim) tokens with
one shared compiled masked-mean helper, over frames, over patches, and over both."""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
B, T, P, D = 4, 8, 16, 32


@torch.compile
def masked_mean(x, mask, dim):
    m = mask.to(x.dtype)
    return (x * m).sum(dim) / m.sum(dim).clamp(min=1.0)


class VideoSummary(nn.Module):
    def __init__(self):
        super().__init__()
        self.patch_proj = nn.Linear(48, D)
        self.temporal_head = nn.Linear(D, D)
        self.spatial_head = nn.Linear(D, D)
        self.global_head = nn.Linear(D, D)

    def forward(self, patches, frame_valid, patch_valid):
        x = self.patch_proj(patches)
        mask = (frame_valid[:, :, None] & patch_valid[:, None, :])[..., None]
        per_patch = self.temporal_head(masked_mean(x, mask, dim=1))  # (B, P, D)
        per_frame = self.spatial_head(masked_mean(x, mask, dim=2))  # (B, T, D)
        clip = self.global_head(masked_mean(x, mask, dim=(1, 2)))  # (B, D)
        return per_patch, per_frame, clip


model = VideoSummary()
text = torch.randn(B, D)
for _ in range(3):
    frame_valid = torch.rand(B, T) > 0.2
    patch_valid = torch.rand(B, P) > 0.1
    per_patch, per_frame, clip = model(torch.randn(B, T, P, 48), frame_valid, patch_valid)
    loss = F.cross_entropy(F.normalize(clip, dim=-1) @ F.normalize(text, dim=-1).T / 0.07, torch.arange(B))
    loss = loss + per_frame.pow(2).mean() + per_patch.pow(2).mean()
    loss.backward()
print(f"loss {loss.item():.3f}")
