"""Validation of a regression model behind a live dashboard: the compiled evaluation step puts
the batch loss into the dashboard's status line (`status.text`), which a display thread would
show as it is."""
import torch
import torch.nn as nn

torch.manual_seed(0)


class StatusLine:
    text = ""


status = StatusLine()
model = nn.Sequential(nn.Linear(10, 32), nn.ReLU(), nn.Linear(32, 1)).eval()


@torch.compile
def eval_step(x, y):
    loss = nn.functional.l1_loss(model(x).squeeze(-1), y)
    status.text = "val l1 " + str(loss)
    return loss


with torch.no_grad():
    total = 0.0
    for i in range(4):
        x = torch.randn(64, 10)
        total += eval_step(x, x[:, 0] * 2)
print(status.text, float(total) / 4)
