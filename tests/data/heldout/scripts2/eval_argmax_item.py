# An evaluation loop that counts correct answers with .item() per batch and prints the
# predicted class of the first example of each batch.
import torch
import torch_xla
import torch_xla.core.xla_model as xm

device = xm.xla_device()
torch.manual_seed(17)
model = torch.nn.Sequential(torch.nn.Linear(5, 10), torch.nn.ReLU(),
                            torch.nn.Linear(10, 3)).to(device)
model.eval()
batches = [(torch.randn(6, 5), torch.randint(0, 3, (6,))) for _ in range(7)]
correct = total = 0
with torch.no_grad():
    for i, (x, y) in enumerate(batches):
        x, y = x.to(device), y.to(device)
        logits = model(x)
        pred = logits.argmax(dim=-1)
        correct += (pred == y).sum().item()
        total += y.size(0)
        print(f"batch {i}: first prediction {pred[0].item()}")
print(f"accuracy {correct / total:.3f}")
