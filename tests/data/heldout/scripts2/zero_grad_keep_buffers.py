# Gradients zeroed in place (set_to_none=False) as older code does; AdamW with weight decay.
import torch
import torch_xla
import torch_xla.core.xla_model as xm

device = torch_xla.device()
torch.manual_seed(47)
model = torch.nn.Sequential(torch.nn.Linear(7, 14), torch.nn.SiLU(),
                            torch.nn.Linear(14, 2)).to(device)
opt = torch.optim.AdamW(model.parameters(), lr=2e-3, weight_decay=0.01)
for step in range(7):
    x = torch.randn(9, 7).to(device)
    y = torch.randint(0, 2, (9,)).to(device)
    opt.zero_grad(set_to_none=False)
    loss = torch.nn.functional.cross_entropy(model(x), y)
    loss.backward()
    opt.step()
    xm.mark_step()
print("loss", loss.item())
