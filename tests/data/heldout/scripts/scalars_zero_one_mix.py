# Python scalars 0, 1 and others as operands: a regularizer weighted 0.0, a loss scaled by 1.0,
# a constant 0.5 and a temperature 2.0.
import torch
import torch_xla
import torch_xla.core.xla_model as xm

device = torch_xla.device()
torch.manual_seed(3)
model = torch.nn.Linear(6, 3).to(device)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
reg_weight = 0.0
for step in range(5):
    x = torch.randn(4, 6, device=device)
    logits = model(x) / 2.0
    loss = logits.softmax(-1).sub(0.5).pow(2).mean() * 1.0
    loss = loss + reg_weight * model.weight.pow(2).sum()
    loss = loss.add(1).sub(1)
    opt.zero_grad()
    loss.backward()
    opt.step()
    xm.mark_step()
print(loss.item())
