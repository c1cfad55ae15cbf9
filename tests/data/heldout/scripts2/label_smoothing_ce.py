# Cross entropy with label smoothing in training, plain cross entropy and accuracy on a
# validation batch every fourth step (read together with one .item() each).
import torch
import torch_xla
import torch_xla.core.xla_model as xm

device = xm.xla_device()
torch.manual_seed(67)
model = torch.nn.Sequential(torch.nn.Linear(12, 24), torch.nn.ReLU(), torch.nn.Dropout(0.1),
                            torch.nn.Linear(24, 6)).to(device)
opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9, nesterov=True)
train_loss_fn = torch.nn.CrossEntropyLoss(label_smoothing=0.1)
val_x, val_y = torch.randn(20, 12).to(device), torch.randint(0, 6, (20,)).to(device)
for step in range(12):
    model.train()
    x, y = torch.randn(8, 12).to(device), torch.randint(0, 6, (8,)).to(device)
    loss = train_loss_fn(model(x), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    xm.mark_step()
    if step % 4 == 3:
        model.eval()
        with torch.no_grad():
            logits = model(val_x)
            val_loss = torch.nn.functional.cross_entropy(logits, val_y)
            acc = (logits.argmax(1) == val_y).float().mean()
        print(step, val_loss.item(), acc.item())
