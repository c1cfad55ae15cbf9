"""Few-shot training on Gaudi: prototypes summed per class with index_add_ over the episode's
N-way labels (0..N-1) and divided by the shot count of each class."""
import torch
import torch.nn as nn
import torch.nn.functional as F
import habana_frameworks.torch.core as htcore

torch.manual_seed(0)
N_WAY, K_SHOT, N_QUERY = 5, 3, 4


def class_prototypes(support, support_labels, n_way: int):
    sums = support.new_zeros(n_way, support.shape[1]).index_add_(0, support_labels, support)
    ones = torch.ones_like(support_labels, dtype=support.dtype)
    counts = support.new_zeros(n_way).index_add_(0, support_labels, ones)
    return sums / counts.clamp(min=1).unsqueeze(1)


class ConvEncoder(nn.Module):
    def __init__(self, dim=32):
        super().__init__()
        self.net = nn.Sequential(
            nn.Conv2d(1, 16, 3, padding=1), nn.BatchNorm2d(16), nn.ReLU(), nn.MaxPool2d(2),
            nn.Conv2d(16, 32, 3, padding=1), nn.BatchNorm2d(32), nn.ReLU(),
            nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(32, dim))

    def forward(self, x):
        return self.net(x)


class ProtoNetLoss(nn.Module):
    def __init__(self, encoder, n_way):
        super().__init__()
        self.encoder = encoder
        self.n_way = n_way

    def forward(self, support_x, support_y, query_x, query_y):
        protos = class_prototypes(self.encoder(support_x), support_y, self.n_way)
        logits = -torch.cdist(self.encoder(query_x), protos).pow(2)
        return F.cross_entropy(logits, query_y)


def sample_episode():
    support_y = torch.arange(N_WAY).repeat_interleave(K_SHOT)
    query_y = torch.arange(N_WAY).repeat_interleave(N_QUERY)
    return (torch.randn(N_WAY * K_SHOT, 1, 28, 28), support_y,
            torch.randn(N_WAY * N_QUERY, 1, 28, 28), query_y)


loss_fn = ProtoNetLoss(ConvEncoder(), N_WAY)
compiled_loss = torch.compile(loss_fn, backend="hpu_backend")
opt = torch.optim.Adam(loss_fn.parameters(), lr=1e-3)
for episode in range(4):
    loss = compiled_loss(*sample_episode())
    loss.backward()
    htcore.mark_step()
    opt.step()
    opt.zero_grad(set_to_none=True)
    htcore.mark_step()
print(f"episode loss {loss.item():.4f}")
