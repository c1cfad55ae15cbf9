# Logit clipping whose bound comes from a schedule: the bound shrinks every other step and is a
# Python float passed to torch.clamp.
import torch
import torch_xla
import torch_xla.core.xla_model as xm

device = torch_xla.device()
torch.manual_seed(13)
model = torch.nn.Sequential(torch.nn.Linear(6, 16), torch.nn.ReLU(),
                            torch.nn.Linear(16, 4)).to(device)
opt = torch.optim.SGD(model.parameters(), lr=0.05)


def clip_bound(step):
    return 10.0 / (1 + step // 2)


for step in range(8):
    x = torch.randn(12, 6).to(device)
    y = torch.randint(0, 4, (12,)).to(device)
    bound = clip_bound(step)
    logits = torch.clamp(model(x), min=-bound, max=bound)
    loss = torch.nn.functional.cross_entropy(logits, y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    xm.mark_step()
print("loss", loss.item())
