# Augmentation by repetition: each batch is repeated a number of times that depends on the step,
# and a per-class weight vector is expanded to the batch.
import torch
import torch_xla
import torch_xla.core.xla_model as xm

device = torch_xla.device()
torch.manual_seed(23)
model = torch.nn.Linear(4, 3).to(device)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
class_weight = torch.tensor([1.0, 2.0, 0.5], device=device)
for step in range(9):
    copies = step % 3 + 1
    x = torch.randn(5, 4).to(device).repeat(copies, 1)
    x = x + 0.01 * torch.randn_like(x)
    y = torch.randint(0, 3, (5,)).to(device).repeat(copies)
    w = class_weight.unsqueeze(0).expand(x.size(0), -1)
    logp = torch.log_softmax(model(x), dim=-1)
    loss = -(w * logp).gather(1, y.unsqueeze(1)).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
    xm.mark_step()
print("last loss", loss.item())
