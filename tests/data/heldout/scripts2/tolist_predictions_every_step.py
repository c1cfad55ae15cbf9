# Predictions collected on the host every step with .tolist() to compute a confusion matrix in
# Python at the end.
import torch
import torch_xla
import torch_xla.core.xla_model as xm

device = xm.xla_device()
torch.manual_seed(7)
num_classes = 3
model = torch.nn.Sequential(torch.nn.Linear(6, 12), torch.nn.ReLU(),
                            torch.nn.Linear(12, num_classes)).to(device)
opt = torch.optim.SGD(model.parameters(), lr=0.05)
all_preds, all_labels = [], []
for step in range(8):
    x = torch.randn(10, 6)
    y = torch.randint(0, num_classes, (10,))
    logits = model(x.to(device))
    loss = torch.nn.functional.cross_entropy(logits, y.to(device))
    opt.zero_grad()
    loss.backward()
    opt.step()
    xm.mark_step()
    all_preds.extend(logits.argmax(dim=1).tolist())
    all_labels.extend(y.tolist())

confusion = [[0] * num_classes for _ in range(num_classes)]
for p, t in zip(all_preds, all_labels):
    confusion[t][p] += 1
print(confusion)
