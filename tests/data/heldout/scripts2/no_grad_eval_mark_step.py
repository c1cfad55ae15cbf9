# Evaluation under torch.no_grad() with xm.mark_step() after every batch; the summed loss and the
# number of correct predictions stay on the device until the end of the pass.
import torch
import torch_xla
import torch_xla.core.xla_model as xm

device = xm.xla_device()
torch.manual_seed(37)
model = torch.nn.Sequential(torch.nn.Conv2d(1, 4, 3), torch.nn.ReLU(), torch.nn.Flatten(),
                            torch.nn.Linear(4 * 6 * 6, 5)).to(device)
val_set = torch.utils.data.TensorDataset(torch.randn(40, 1, 8, 8), torch.randint(0, 5, (40,)))
val_loader = torch.utils.data.DataLoader(val_set, batch_size=16)


def evaluate():
    model.eval()
    total_loss = torch.zeros((), device=device)
    correct = torch.zeros((), device=device, dtype=torch.long)
    seen = 0
    with torch.no_grad():
        for x, y in val_loader:
            x, y = x.to(device), y.to(device)
            logits = model(x)
            total_loss += torch.nn.functional.cross_entropy(logits, y, reduction="sum")
            correct += (logits.argmax(1) == y).sum()
            seen += y.numel()
            xm.mark_step()
    return total_loss.item() / seen, correct.item() / seen


for epoch in range(2):
    print(epoch, evaluate())
