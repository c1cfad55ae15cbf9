# No step marker in the training loop, loss.item() logged every step: each read runs the graph
# that has grown since the start.
import torch
import torch_xla

device = torch_xla.device()
torch.manual_seed(0)
model = torch.nn.Linear(8, 1).to(device)
opt = torch.optim.SGD(model.parameters(), lr=0.01)
for step in range(6):
    x = torch.randn(4, 8).to(device)
    opt.zero_grad()
    loss = model(x).pow(2).mean()
    loss.backward()
    opt.step()
    print(f"step {step}: {loss.item():.4f}")
