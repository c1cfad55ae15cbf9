# In-place updates through views of a device tensor: a running buffer whose slices are scaled,
# shifted and overwritten each step (narrow, indexing, transpose, view), read every fourth step.
import torch
import torch_xla
import torch_xla.core.xla_model as xm

device = xm.xla_device()
torch.manual_seed(71)
buf = torch.zeros(6, 8, device=device)
for step in range(8):
    new = torch.randn(6, 8).to(device)
    buf[:, :4].mul_(0.9)
    buf[:, 4:].add_(new[:, 4:], alpha=0.1)
    buf.narrow(0, 0, 2).copy_(new[:2])
    buf.t()[1].clamp_(min=-1.0, max=1.0)
    buf.view(48)[::7].fill_(0.5)
    xm.mark_step()
    if step % 4 == 3:
        print(f"step {step}: sum {buf.sum().item():.4f}")
