"""A multi-objective trainer that reads how to combine its loss terms from the experiment
config as a formula string, evaluated against the computed terms in the compiled loss."""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
CONFIG = {"loss": "ce + 0.5 * kd + 1e-4 * l2", "temperature": 2.0}

student = nn.Sequential(nn.Linear(32, 64), nn.ReLU(), nn.Linear(64, 10))
teacher = nn.Sequential(nn.Linear(32, 128), nn.ReLU(), nn.Linear(128, 10)).eval()
opt = torch.optim.Adam(student.parameters(), lr=1e-3)


@torch.compile
def compute_loss(x, y):
    logits = student(x)
    with torch.no_grad():
        soft = F.softmax(teacher(x) / CONFIG["temperature"], -1)
    terms = {
        "ce": F.cross_entropy(logits, y),
        "kd": F.kl_div(F.log_softmax(logits / CONFIG["temperature"], -1), soft,
                       reduction="batchmean"),
        "l2": sum((p ** 2).sum() for p in student.parameters()),
    }
    return eval(CONFIG["loss"], {}, terms)


for step in range(4):
    loss = compute_loss(torch.randn(16, 32), torch.randint(0, 10, (16,)))
    loss.backward()
    opt.step()
    opt.zero_grad()
print(f"loss {loss.item():.4f}")
