# Each step builds small tensors from Python lists (per-sample weights and a step-dependent offset
# vector) and moves them with .to(device); the weighted loss is read every third step.
import torch
import torch_xla
import torch_xla.core.xla_model as xm

device = xm.xla_device()
torch.manual_seed(78)
model = torch.nn.Linear(4, 1).to(device)
opt = torch.optim.SGD(model.parameters(), lr=0.02)
for step in range(9):
    sample_weights = torch.tensor([1.0, 0.5, 2.0, 1.0, float(step % 3)]).to(device)
    offset = torch.tensor([step * 0.1, 0.0, -step * 0.1, 1.0]).to(device)
    x = torch.randn(5, 4).to(device) + offset
    y = torch.randn(5).to(device)
    per = (model(x).squeeze(-1) - y) ** 2
    loss = (per * sample_weights).sum() / sample_weights.sum()
    opt.zero_grad()
    loss.backward()
    opt.step()
    xm.mark_step()
    if step % 3 == 2:
        print(f"step {step}: {loss.item():.4f}")
