# A small LSTM sequence classifier: the last hidden state feeds a linear head; Adam, and the
# loss printed every fourth step.
import torch
import torch_xla
import torch_xla.core.xla_model as xm

device = xm.xla_device()
torch.manual_seed(29)


class LSTMClassifier(torch.nn.Module):
    def __init__(self, n_in=4, hidden=16, n_classes=3):
        super().__init__()
        self.lstm = torch.nn.LSTM(n_in, hidden, batch_first=True)
        self.head = torch.nn.Linear(hidden, n_classes)

    def forward(self, x):
        _, (h, _) = self.lstm(x)
        return self.head(h[-1])


model = LSTMClassifier().to(device)
opt = torch.optim.Adam(model.parameters(), lr=5e-3)
for step in range(8):
    x = torch.randn(6, 10, 4).to(device)
    y = torch.randint(0, 3, (6,)).to(device)
    loss = torch.nn.functional.cross_entropy(model(x), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    xm.mark_step()
    if step % 4 == 3:
        print(step, loss.item())
