import torch

torch.manual_seed(0)

_rotary_cache = {}


@torch.compile
def apply_rotary(x, positions):
    key = id(positions)
    if key not in _rotary_cache:
        freqs = positions[:, None] * torch.arange(1, x.shape[-1] // 2 + 1)
        _rotary_cache[key] = (freqs.sin(), freqs.cos())
    sin, cos = _rotary_cache[key]
    x1, x2 = x.chunk(2, dim=-1)
    return torch.cat([x1 * cos - x2 * sin, x1 * sin + x2 * cos], dim=-1)


positions = torch.arange(10, dtype=torch.float32)
for _ in range(4):
    out = apply_rotary(torch.randn(2, 10, 16), positions)
print(out.shape)
