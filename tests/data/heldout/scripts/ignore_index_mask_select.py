# Token loss averaged over the positions whose label is not -100, selected with a boolean mask
# on the device (a data-dependent shape) every step.
import torch
import torch_xla
import torch_xla.core.xla_model as xm

device = torch_xla.device()
torch.manual_seed(5)
model = torch.nn.Linear(8, 11).to(device)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for step in range(4):
    x = torch.randn(2, 5, 8, device=device)
    labels = torch.randint(0, 11, (2, 5), device=device)
    labels[:, 0] = -100
    logits = model(x)
    keep = labels != -100
    loss = torch.nn.functional.cross_entropy(logits[keep], labels[keep])
    opt.zero_grad()
    loss.backward()
    opt.step()
    xm.mark_step()
print(loss.item())
