# Ranking on the device: scores from a linear model are sorted, the top 3 taken with topk and a
# cumulative sum of sorted probabilities gives a nucleus (top-p) cut; the top indices are read
# each step with .tolist().
import torch
import torch_xla
import torch_xla.core.xla_model as xm

device = xm.xla_device()
torch.manual_seed(72)
scorer = torch.nn.Linear(5, 1).to(device)
for step in range(6):
    items = torch.randn(10, 5).to(device)
    with torch.no_grad():
        probs = torch.softmax(scorer(items).squeeze(-1), dim=0)
        sorted_p, order = torch.sort(probs, descending=True)
        cum = torch.cumsum(sorted_p, dim=0)
        keep = (cum - sorted_p) < 0.8
        nucleus = torch.where(keep, sorted_p, torch.zeros_like(sorted_p))
        top_p, top_i = torch.topk(probs, k=3)
    xm.mark_step()
    print(step, top_i.tolist(), f"{nucleus.sum().item():.3f}")
