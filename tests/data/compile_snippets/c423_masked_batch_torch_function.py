"""Masked-sequence statistics: a small `MaskedBatch` container (values and a 0/1 mask) that
implements `__torch_function__` so that `torch.sum`, `torch.mean` and friends see the masked
values; a compiled normalizer computes per-feature statistics over the real frames only."""
import torch


class MaskedBatch:
    def __init__(self, values, mask):
        self.values, self.mask = values, mask

    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        args = [a.values * a.mask.unsqueeze(-1) if isinstance(a, MaskedBatch) else a
                for a in args]
        return func(*args, **kwargs)


@torch.compile
def masked_normalize(batch):
    n = batch.mask.sum((0, 1)).clamp(min=1)
    mean = torch.sum(batch, dim=(0, 1)) / n
    centered = MaskedBatch(batch.values - mean, batch.mask)
    var = torch.sum(torch.square(centered), dim=(0, 1)) / n
    return (batch.values - mean) / (var + 1e-5).sqrt()


torch.manual_seed(0)
for step in range(4):
    lengths = torch.randint(3, 12, (6,))
    mask = (torch.arange(12)[None, :] < lengths[:, None]).float()
    out = masked_normalize(MaskedBatch(torch.randn(6, 12, 8) * 3 + 1, mask))
print(out.shape)
