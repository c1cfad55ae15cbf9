# Gradient accumulation: four micro-batches per optimizer step, the loss divided by the number
# of micro-batches, mark_step only after the optimizer step (every fourth micro-batch).
import torch
import torch_xla
import torch_xla.core.xla_model as xm

device = xm.xla_device()
torch.manual_seed(0)
accum_steps = 4
model = torch.nn.Sequential(torch.nn.Linear(10, 32), torch.nn.GELU(),
                            torch.nn.Linear(32, 5)).to(device)
opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
loss_fn = torch.nn.CrossEntropyLoss()

opt.zero_grad()
for micro_step in range(16):
    x = torch.randn(8, 10).to(device)
    y = torch.randint(0, 5, (8,)).to(device)
    loss = loss_fn(model(x), y) / accum_steps
    loss.backward()
    if (micro_step + 1) % accum_steps == 0:
        opt.step()
        opt.zero_grad()
        xm.mark_step()
        print(f"update {(micro_step + 1) // accum_steps} loss {loss.item() * accum_steps:.4f}")
