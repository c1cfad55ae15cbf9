# A checkpoint kept in host memory without xm.save: every third step the model's state_dict is
# copied to the CPU with .cpu() (the best one by loss is kept, the loss read at the same time).
import torch
import torch_xla
import torch_xla.core.xla_model as xm

device = xm.xla_device()
torch.manual_seed(80)
model = torch.nn.Sequential(torch.nn.Linear(5, 10), torch.nn.ReLU(),
                            torch.nn.Linear(10, 1)).to(device)
opt = torch.optim.SGD(model.parameters(), lr=0.05)
best_loss, best_state = float("inf"), None
for step in range(9):
    x = torch.randn(8, 5).to(device)
    loss = torch.nn.functional.mse_loss(model(x), x[:, :1])
    opt.zero_grad()
    loss.backward()
    opt.step()
    xm.mark_step()
    if step % 3 == 2:
        value = loss.item()
        if value < best_loss:
            best_loss = value
            best_state = {k: v.cpu() for k, v in model.state_dict().items()}
print("best", best_loss, sorted(best_state))
