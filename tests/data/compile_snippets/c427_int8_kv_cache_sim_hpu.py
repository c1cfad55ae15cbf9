"""Gaudi accuracy study for an int8 KV cache: keys and values are stored as per-tensor
quantized tensors (`torch.quantize_per_tensor` with a calibrated scale) and dequantized before
the attention in the compiled decode step."""
import torch
import torch.nn.functional as F

try:
    import habana_frameworks.torch.core as htcore
    BACKEND = "hpu_backend"
except ImportError:
    htcore, BACKEND = None, "eager"

torch.manual_seed(0)
K_SCALE, V_SCALE = 0.03, 0.02  # calibrated offline on a few prompts


@torch.compile(backend=BACKEND)
def attend_int8(q, k, v):
    kq = torch.quantize_per_tensor(k, K_SCALE, 0, torch.qint8)
    vq = torch.quantize_per_tensor(v, V_SCALE, 0, torch.qint8)
    return F.scaled_dot_product_attention(q, kq.dequantize(), vq.dequantize())


errors = []
for step in range(4):
    q, k, v = (torch.randn(1, 4, 16, 32) for _ in range(3))
    ref = F.scaled_dot_product_attention(q, k, v)
    errors.append((attend_int8(q, k, v) - ref).abs().max())
    if htcore is not None:
        htcore.mark_step()
print(f"max abs error {torch.stack(errors).max():.4f}")
