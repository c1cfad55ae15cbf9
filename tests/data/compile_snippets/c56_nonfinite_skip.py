import torch

torch.manual_seed(0)
w = torch.randn(5, requires_grad=True)


@torch.compile
def safe_update(w, grad):
    if not torch.isfinite(grad).all():
        return w
    return w - 0.1 * grad


for _ in range(5):
    g = torch.randn(5)
    with torch.no_grad():
        w = safe_update(w, g)
