# torch_xla.compile around the training step, the loss printed from a step closure.
import torch
import torch_xla
import torch_xla.core.xla_model as xm

device = torch_xla.device()
torch.manual_seed(12)
model = torch.nn.Linear(8, 2).to(device)
opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9, nesterov=True)


def train_step(x, y):
    opt.zero_grad()
    loss = torch.nn.functional.cross_entropy(model(x), y)
    loss.backward()
    opt.step()
    return loss


step_fn = torch_xla.compile(train_step)
for step in range(5):
    x = torch.randn(4, 8).to(device)
    y = torch.randint(0, 2, (4,)).to(device)
    loss = step_fn(x, y)
    xm.add_step_closure(lambda l=loss, s=step: print(s, l.item()))
xm.mark_step()
