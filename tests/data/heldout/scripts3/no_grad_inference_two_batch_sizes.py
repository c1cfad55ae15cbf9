# Inference only, under torch.no_grad(): requests arrive in batches of 8 and of 3 (two input shapes),
# the predicted class ids are copied back to the host after each batch.
import torch
import torch_xla
import torch_xla.core.xla_model as xm

device = xm.xla_device()
torch.manual_seed(76)
model = torch.nn.Sequential(torch.nn.Linear(12, 24), torch.nn.ReLU(),
                            torch.nn.Linear(24, 5)).to(device)
model.eval()
batch_sizes = [8, 8, 3, 8, 3, 3, 8]
predictions = []
with torch.no_grad():
    for n in batch_sizes:
        x = torch.randn(n, 12).to(device)
        pred = model(x).argmax(dim=1)
        xm.mark_step()
        predictions.extend(pred.cpu().tolist())
print(len(predictions), predictions[:10])
