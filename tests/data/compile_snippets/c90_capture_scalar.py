import torch
import torch._dynamo

torch._dynamo.config.capture_scalar_outputs = True
torch.manual_seed(0)


@torch.compile
def normalize_by_norm(grads):
    total = torch.stack([g.norm() for g in grads]).norm()
    scale = 1.0 / max(total.item(), 1e-6)
    return [g * scale for g in grads]


grads = [torch.randn(10, 10), torch.randn(10), torch.randn(3, 10)]
for _ in range(4):
    grads = normalize_by_norm(grads)
print(torch.stack([g.norm() for g in grads]))
