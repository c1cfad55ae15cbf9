# Inference: the indices of the scores above a threshold with nonzero(), then gathered, per batch.
import torch
import torch_xla
import torch_xla.core.xla_model as xm

device = torch_xla.device()
torch.manual_seed(6)
scorer = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.Sigmoid()).to(device)
kept = []
with torch.no_grad():
    for step in range(4):
        boxes = torch.randn(8, 4, device=device)
        scores = scorer(boxes).max(dim=1).values
        idx = torch.nonzero(scores > 0.6).squeeze(1)
        kept.append(boxes[idx].sum(0))
        xm.mark_step()
print([k.cpu() for k in kept])
