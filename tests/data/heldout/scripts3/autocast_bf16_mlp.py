# Mixed precision on the XLA device: the forward pass under torch.autocast("xla", bfloat16), the
# loss computed in float32, parameters and optimizer in float32.
import torch
import torch_xla
import torch_xla.core.xla_model as xm

device = xm.xla_device()
torch.manual_seed(63)
model = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.GELU(),
                            torch.nn.Linear(32, 4)).to(device)
opt = torch.optim.Adam(model.parameters(), lr=3e-3)
losses = []
for step in range(8):
    x = torch.randn(8, 16).to(device)
    y = torch.randint(0, 4, (8,)).to(device)
    with torch.autocast("xla", dtype=torch.bfloat16):
        logits = model(x)
    loss = torch.nn.functional.cross_entropy(logits.float(), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    xm.mark_step()
    losses.append(loss.detach())
print("losses", [round(v.item(), 3) for v in losses])
