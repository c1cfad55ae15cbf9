# Training accuracy and loss accumulated on the device across the epoch (no host read inside the
# loop) and read once per epoch.
import torch
import torch_xla
import torch_xla.core.xla_model as xm

device = xm.xla_device()
torch.manual_seed(74)
model = torch.nn.Sequential(torch.nn.Linear(7, 14), torch.nn.ReLU(),
                            torch.nn.Linear(14, 3)).to(device)
opt = torch.optim.Adam(model.parameters(), lr=5e-3)
for epoch in range(3):
    running_loss = torch.tensor(0.0, device=device)
    correct = torch.tensor(0, device=device)
    for step in range(5):
        x = torch.randn(8, 7).to(device)
        y = torch.randint(0, 3, (8,)).to(device)
        logits = model(x)
        loss = torch.nn.functional.cross_entropy(logits, y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        running_loss += loss.detach()
        correct += (logits.argmax(-1) == y).sum()
        xm.mark_step()
    print(f"epoch {epoch}: loss {running_loss.item() / 5:.4f} acc {correct.item() / 40:.3f}")
